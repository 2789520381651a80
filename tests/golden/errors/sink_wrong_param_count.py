def sink(b):
    return 0.0
