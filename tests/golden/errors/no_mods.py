window: int
CAP = 50.0
