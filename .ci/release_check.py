#!/usr/bin/env python3
"""Checks what ./release wrote (./release runs it last; it can run alone on a dist folder):
    release_check.py DIST
- SHA256SUMS holds every other file, and each sum is right;
- the Linux binary needs glibc 2.28 at most (its highest GLIBC_ symbol version, by objdump -T);
- the manylinux wheel installs in a fresh venv and hangar.info answers as the binary's info --json;
- the Blender zip lists the four platforms, each with its wheel inside, and passes Blender's own
  validator when PyPI's bpy 5.0.1 is at hand (~/.cache/hangar-ci/bpy-5.0.1, as .ci/blender makes it).
Prints one line a check and 'N passed, M failed'; exits 1 on a failure."""
import glob, hashlib, json, os, re, subprocess, sys, tarfile, tempfile, tomllib, zipfile

dist = os.path.abspath(sys.argv[1])
here = os.path.dirname(os.path.abspath(__file__))
corpus = os.environ.get("HANGAR_CORPUS", os.path.join(here, "..", "..", "shared", "corpus"))
samples = [os.path.join(here, "..", "samples", "wedge-lod0.xmf")]
samples += sorted(glob.glob(os.path.join(corpus, "x4", "*.xmf")))[:2] + sorted(glob.glob(os.path.join(corpus, "m3", "*.m3")))[:2]
passed = failed = 0
tmp = tempfile.mkdtemp(prefix="hangar-release-check-")


def case(name, ok, figures):
    global passed, failed
    print(f"{'ok' if ok else 'fail'}\t{name}\t{figures}", flush=True)
    passed += bool(ok)
    failed += not ok


def one(pattern):
    hits = sorted(glob.glob(os.path.join(dist, pattern)))
    return hits[0] if hits else None


# Checksums
sums = {}
for line in open(os.path.join(dist, "SHA256SUMS"), encoding="utf-8"):
    digest, name = line.rstrip("\n").split("  ", 1)
    sums[name] = digest
files = sorted(f for f in os.listdir(dist) if f != "SHA256SUMS")
wrong = [f for f in files if sums.get(f) != hashlib.sha256(open(os.path.join(dist, f), "rb").read()).hexdigest()]
case("SHA256SUMS", not wrong and len(sums) == len(files), f"{len(files)} files, wrong or missing {wrong}")

# The Linux binary's glibc floor
linux = None
tgz = one("hangar-*-linux-x64.tar.gz")
if tgz:
    with tarfile.open(tgz) as t:
        t.extractall(tmp, filter="data")
    linux = next(iter(glob.glob(os.path.join(tmp, "*", "hangar"))), None)
out = subprocess.run(["objdump", "-T", linux], capture_output=True, text=True).stdout if linux else ""
versions = sorted({tuple(int(x) for x in v.split(".")) for v in re.findall(r"GLIBC_([0-9.]+)", out)})
floor = ".".join(map(str, versions[-1])) if versions else "?"
case("glibc floor", bool(versions) and versions[-1] <= (2, 28), f"{os.path.basename(tgz or '-')}: GLIBC {floor}")

# The manylinux wheel in a fresh venv against the binary
wheel = one("hangar-*-cp311-abi3-manylinux_*_x86_64.whl")
venv = os.path.join(tmp, "venv")
python = "python3.11" if subprocess.run(["which", "python3.11"], capture_output=True).returncode == 0 else sys.executable
ok, figures = False, "no wheel or binary"
if wheel and linux:
    subprocess.run([python, "-m", "venv", venv], check=True)
    pip = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q", wheel], capture_output=True, text=True)
    code = "import hangar, json, sys\nfor f in sys.argv[1:]: print(json.dumps(hangar.info(f)))"
    got = subprocess.run([os.path.join(venv, "bin", "python"), "-c", code, *samples], capture_output=True, text=True)
    lines = got.stdout.splitlines()
    same = sum(json.loads(g) == json.loads(subprocess.run([linux, "info", "--json", f], capture_output=True,
                                                          text=True).stdout or "null")
               for f, g in zip(samples, lines))
    ok = pip.returncode == 0 and same == len(samples)
    figures = f"{os.path.basename(wheel)}: hangar.info == info --json on {same}/{len(samples)} {pip.stderr.strip()[-200:]}"
case("linux wheel", ok, figures)

# The Blender zip: four platforms with their wheels; Blender's own validator
zp = one("hangar-*-blender.zip")
covered = []
if zp:
    with zipfile.ZipFile(zp) as z:
        manifest = tomllib.loads(z.read("blender_manifest.toml").decode())
        names = set(z.namelist())
    tags = {"windows-x64": r"win_amd64", "linux-x64": r"manylinux_\d+_\d+_x86_64", "macos-arm64": r"macosx_\d+_\d+_arm64",
            "macos-x64": r"macosx_\d+_\d+_x86_64"}
    wheels = [w for w in manifest.get("wheels", []) if w.removeprefix("./") in names]
    covered = [p for p, rx in tags.items() if p in manifest.get("platforms", []) and any(re.search(rx, w) for w in wheels)]
case("blender platforms", len(covered) == 4, f"{os.path.basename(zp or '-')}: {covered}")
bpy = os.path.expanduser("~/.cache/hangar-ci/bpy-5.0.1/bin/python")
ext = glob.glob(os.path.expanduser("~/.cache/hangar-ci/bpy-5.0.1/lib/python3*/site-packages/bpy/*/scripts/addons_core/bl_pkg/cli/blender_ext.py"))
if zp and ext and os.path.exists(bpy):
    tags_py = glob.glob(os.path.join(os.path.dirname(ext[0]), "..", "..", "..", "modules", "_bpy_internal", "extensions", "tags.py"))
    r = subprocess.run([bpy, ext[0], "validate", *(["--valid-tags", tags_py[0]] if tags_py else []), zp],
                       capture_output=True, text=True)
    case("blender validator", r.returncode == 0, (r.stdout + r.stderr).strip()[-200:])
else:
    print("skip\tblender validator\tno bpy 5.0.1 in ~/.cache/hangar-ci (.ci/blender installs it)")

print(f"release check: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
