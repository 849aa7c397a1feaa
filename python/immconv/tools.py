"""Finds the spconv command-line tools.

Order: `$SPCONV_BIN/<tool>`, then the source tree's `build/bin/<tool>` (the package usually
runs from an editable install inside the repository), then `PATH`. A missing tool is an error
that says where it looked, because a silent fallback to some other binary would compile with
a compiler version nobody asked for.
"""
import os
import shutil

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ToolNotFound(RuntimeError):
    pass


def find_tool(name="spconv-translate"):
    looked = []
    env = os.environ.get("SPCONV_BIN")
    if env:
        p = os.path.join(env, name)
        if os.access(p, os.X_OK):
            return p
        looked.append(p + " ($SPCONV_BIN)")
    p = os.path.join(REPO_ROOT, "build", "bin", name)
    if os.access(p, os.X_OK):
        return p
    looked.append(p)
    p = shutil.which(name)
    if p:
        return p
    looked.append("PATH")
    raise ToolNotFound("%s not found (looked in %s); build spconv (scripts/setup.sh) or set "
                       "SPCONV_BIN to the directory that holds it" % (name, ", ".join(looked)))
