"""Writes malformed launch sidecars for launch-errors.test into the current directory.

usage: make_sidecars.py GOOD.json
Each case is GOOD.json (one kernel with a conv) with one thing wrong.
"""
import copy
import json
import sys

good = json.load(open(sys.argv[1]))
text = json.dumps(good, indent=2)


def write(name, data):
    with open(name, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def edited(name, change):
    doc = copy.deepcopy(good)
    change(doc["kernels"][0])
    write(name, json.dumps(doc, indent=2))


write("good.json", text)
# The text itself.
write("empty.json", "")
write("truncated.json", text[: text.index('"params"') + 12])
write("literal.json", text.replace('"has_bias": false', '"has_bias": fals', 1))
write("trailing.json", text + "\n}")
write("not-utf8.json", text.replace('"sm_90"', '"sm_@"', 1).encode().replace(b"@", b"\xff"))
write("surrogate.json", text.replace('"sm_90"', '"sm_\\ud800"', 1))
write("control.json", text.replace('"sm_90"', '"sm_\t90"', 1))
write("overflow.json", text.replace('"groups": 1', '"groups": 1e400', 1))
write("deep.json", "[" * 300 + "]" * 300)
# The fields a launch depends on.
edited("grid-size.json", lambda k: k.__setitem__("grid", [1, 1]))
edited("grid-fraction.json", lambda k: k.__setitem__("grid", [1, 1.5, 1]))
edited("grid-huge.json", lambda k: k.__setitem__("grid", [1, 1e300, 1]))
edited("no-params.json", lambda k: k.pop("params"))
edited("entry-type.json", lambda k: k.__setitem__("entry", 7))
edited("activation.json", lambda k: k["conv"].__setitem__("activation", "gelu"))
edited("layout-unknown.json", lambda k: k["params"][0].__setitem__("layout", "nhwc"))
edited("layout-f32.json", lambda k: k["params"][0].__setitem__("layout", "image_pairs"))


def image_pairs(k):
    for p in k["params"]:
        p["dtype"], p["layout"] = "f16", "image_pairs"


edited("layout-odd.json", image_pairs)


def even_image_pairs(k):
    image_pairs(k)
    k["conv"]["N"] = 2
    for p in k["params"]:
        p["shape"][0] = 2


edited("layout-pairs.json", even_image_pairs)
doc = copy.deepcopy(good)
doc["version"] = 2
write("version.json", json.dumps(doc))
