x = "\x41\u00e9\N{DASH}\101" r"\d+" b"\xff" u"\t"
y = """
multi
line""" '''single'''
z = 1e-3 + .5 + 5. + 1_000 + 0xff + 0o17 + 0b1 + 1E+10
