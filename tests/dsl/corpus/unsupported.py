x = [1, 2, 3]
d = {'a': 1, **e}
t = (1, 2)
a, b = t
s = x[1:2, ::3]
f"{x!r:>10}"
while x:
    pass
for i in range(3): pass
class C:
    pass
try:
    pass
except Exception as e:
    raise
finally:
    pass
with open(p) as fh:
    pass
match command.split():
    case [a]:
        pass
@decorator
async def g():
    await h()
y = (z := 3) + (w for w in x) + 1j + ...
del x; global y; assert y, "m"
