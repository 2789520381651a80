def f(a, b):
	return a if b else (
		lambda x=1, y=2: x << y >> 1 | 2 ^ 3 & 4)
