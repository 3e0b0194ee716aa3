"""What both Blender round-trip scripts check with: a component's files compared with its copy's, an
.ani's states, and the cases' report ('ok|fail NAME problem' a line, then 'N passed, M failed')."""
import difflib, filecmp, glob, os, struct, sys


def files_under(d):
    return sorted(os.path.relpath(p, d) for p in glob.glob(os.path.join(d, "**", "*"), recursive=True) if os.path.isfile(p))


def component_files(xml):
    """The XML, every file of its data folder and the .ani beside it, by lower-case name."""
    d, stem = os.path.dirname(xml), os.path.splitext(os.path.basename(xml))[0].lower()
    found = {os.path.basename(xml).lower(): xml}
    for name in os.listdir(d):
        p = os.path.join(d, name)
        if name.lower() == stem + "_data" and os.path.isdir(p):
            for rel in files_under(p):
                found[f"{stem}_data/{rel}".lower()] = os.path.join(p, rel)
        elif name.lower() == stem + "_data.ani":
            found[name.lower()] = p
    return found


def changed_files(src_xml, dst_xml):
    """The component's files (lower-case names) that differ, are missing or are new in the copy."""
    a, b = component_files(src_xml), component_files(dst_xml)
    return sorted(k for k in a if k not in b or not filecmp.cmp(a[k], b[k], shallow=False)) + sorted(k for k in b if k not in a)


def ani_states(path):
    """Each state of an .ani: (part, state) -> its description and key bytes."""
    b = open(path, "rb").read()
    count = struct.unpack_from("<i", b, 0)[0]
    at = 16 + 160 * count
    states = {}
    for i in range(count):
        d = b[16 + 160 * i:16 + 160 * (i + 1)]
        n = sum(struct.unpack_from("<5i", d, 128))
        key = (d[:64].split(b"\0")[0], d[64:128].split(b"\0")[0])
        states[key] = d + b[at:at + 128 * n]
        at += 128 * n
    return states


def beyond_offset(src_xml, dst_xml):
    """What is wrong when a part was only moved: XML lines changed other than an <offset>'s, or none."""
    a = open(src_xml, encoding="utf-8").read().splitlines()
    b = open(dst_xml, encoding="utf-8").read().splitlines()
    lines = [l[1:] for l in difflib.unified_diff(a, b, lineterm="", n=0) if l[:1] in "+-" and l[:3] not in ("+++", "---")]
    if not lines or any(not l.strip().startswith(("<position", "<quaternion", "<offset", "</offset")) for l in lines):
        return f"XML changed beyond the offset ({len(lines)} lines)"
    return ""


def component_ani(xml):
    return next(p for k, p in component_files(xml).items() if k.endswith(".ani"))


passed = failed = 0


def case(name, body):
    """Runs `body` (returns '' or what is wrong) and reports it; one case's failure, the others still run."""
    global passed, failed
    try:
        problem = body() or ""
    except Exception as e:
        problem = str(e).splitlines()[0] if str(e) else type(e).__name__
    print(f"{'fail' if problem else 'ok'}\t{name}\t{problem}", flush=True)
    passed, failed = (passed, failed + 1) if problem else (passed + 1, failed)


def finish():
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
