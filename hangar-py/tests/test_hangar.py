"""The hangar Python package on the corpus (HANGAR_CORPUS, the folder of x4/, m3/, emfx/, x4-components/)."""
import glob
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import hangar

CORPUS = os.environ.get("HANGAR_CORPUS", "")
pytestmark = pytest.mark.skipif(not os.path.isdir(CORPUS), reason="HANGAR_CORPUS is not set")


def corpus(rel):
    return os.path.join(CORPUS, rel)


def dropship():
    found = glob.glob(corpus("x4-components/*/*/assets/units/size_m/arg_dropship.xml"))
    if not found:
        pytest.skip("no dropship in the corpus")
    return found[0]


def test_info_of_an_xmf_and_an_m3():
    i = hangar.info(corpus("x4/Cgettys__anim_to_ring-collision.xmf"))
    assert (i["format"], i["vertices"], i["triangles"]) == ("XMF v3", 8, 12)
    assert i["details"]["collision"] is True
    m = hangar.info(corpus("m3/ArtemKez_testMod__Devourer_CollectionSkin_Webby.m3"))
    assert (m["vertices"], m["triangles"], m["bones"], m["sequences"]) == (3055, 5224, 58, 5)


def test_info_is_what_the_cli_prints():
    cli = shutil.which("hangar") or os.environ.get("HANGAR_BIN")
    if not cli:
        pytest.skip("no hangar binary on PATH (HANGAR_BIN)")
    for f in sorted(glob.glob(corpus("x4/*.xmf")))[:5] + sorted(glob.glob(corpus("m3/*.m3")))[:5]:
        a = json.loads(subprocess.run([cli, "info", "--json", f], capture_output=True, text=True).stdout)
        assert hangar.info(f) == a


def test_validate_lists_findings():
    assert hangar.validate(corpus("x4/Cgettys__anim_to_ring-lod0.xmf")) == []
    bad = hangar.validate(corpus("x4/MANIFEST.tsv"))
    assert len(bad) == 1 and bad[0]["severity"] == "error" and "unknown format" in bad[0]["message"]


def test_errors_raise_hangar_error_with_the_cli_message():
    with pytest.raises(hangar.Error, match=r"^/nonexistent\.xmf: No such file or directory"):
        hangar.info("/nonexistent.xmf")
    with pytest.raises(hangar.Error, match="unknown format"):
        hangar.open(corpus("x4/MANIFEST.tsv"))


def test_open_gives_numpy_arrays():
    s = hangar.open(corpus("x4/Cgettys__anim_to_ring-collision.xmf"))
    m = s.meshes[0]
    assert m.positions.dtype == np.float32 and m.positions.shape == (8, 3)
    assert m.indices.dtype == np.uint32 and m.indices.shape == (36,)
    assert s.nodes[0].collision and s.nodes[0].mesh == 0


def test_open_m3_skin_and_animations():
    s = hangar.open(corpus("m3/ArtemKez_testMod__Devourer_CollectionSkin_Webby.m3"))
    assert (len(s.nodes), len(s.meshes), len(s.skins), len(s.animations)) == (71, 5, 1, 5)
    assert sum(len(m.positions) for m in s.meshes) == 3055
    m = s.meshes[0]
    assert m.joints.dtype == np.uint16 and m.joints.shape == (37, 4)
    assert m.weights.dtype == np.float32 and m.weights.shape == (37, 4)
    np.testing.assert_allclose(m.weights.sum(axis=1), 1.0, atol=1e-3)
    c = s.animations[0].channels[0]
    assert s.animations[0].name == "Walk 01" and len(s.animations[0].channels) == 46
    assert (c.property, c.times.shape, c.values.shape, c.interpolation) == ("translation", (89,), (89, 3), "LINEAR")


def test_component_scene_keeps_what_the_game_needs():
    s = hangar.open(dropship())
    # The wreck anim_main_wreck is a node with its lod0 and collision meshes under anim_main.
    assert (len(s.nodes), len(s.meshes), len(s.animations), len(s.lights)) == (221, 45, 13, 50)
    wreck = next(i for i, n in enumerate(s.nodes) if n.extras.get("x4", {}).get("wreck"))
    assert s.nodes[s.nodes[wreck].parent].name == "anim_main"
    assert sum(len(m.positions) for m in s.meshes) - sum(
        len(s.meshes[n.mesh].positions) for n in s.nodes if n.parent == wreck) == 165421
    root = s.nodes[0].extras["x4component"]
    assert root["name"] == "arg_dropship" and root["xml"].lstrip().startswith("<")
    ramp = next(n for n in s.nodes if n.name == "anim_ramp")
    assert ramp.extras["x4"]["connection"] == "Connection02"


def test_edges_join_each_corner_to_the_next_once():
    s = hangar.open(corpus("x4/DeadAirRT__part_main-lod0.xmf"), edges=True)
    m = s.meshes[0]
    tri = m.indices.reshape(-1, 3)
    nxt = np.roll(tri, -1, axis=1)
    want = np.sort(np.stack([tri.ravel(), nxt.ravel()], 1), axis=1)
    assert m.edges.dtype == np.uint32 and m.corner_edges.shape == (tri.size,)
    assert (m.edges[m.corner_edges] == want).all()
    # Each vertex pair once: as many edges as distinct sides.
    assert len(m.edges) == len(np.unique(want, axis=0)) == len(np.unique(m.edges, axis=0))
    assert hangar.open(corpus("x4/DeadAirRT__part_main-lod0.xmf")).meshes[0].edges is None


def test_digest_is_zlib_adler32_and_length_of_each_array():
    import zlib
    a = np.arange(100_003, dtype=np.float32).reshape(-1, 1)
    b = np.array([[1, 2], [3, 4]], np.int32)[:, ::-1]  # not contiguous: hashed in C order
    want = "/".join(f"{zlib.adler32(np.ascontiguousarray(x).tobytes()):08x}:{x.nbytes}" for x in (a, b))
    assert hangar.digest(a, b) == want
    assert hangar.digest(np.zeros(0, np.uint8)) == "00000001:0"
    b2 = b.copy()
    b2[1, 1] = 5
    assert hangar.digest(a, b2) != want


def test_models_lists_what_hangar_opens_in_a_folder():
    folder = os.path.dirname(dropship())
    found = hangar.models(folder)
    assert len(found) == 49 and found[0] == "arg_dropship.xml" and found[-1] == "arg_dropship_data/part_keyb_r002-lod0.xmf"
    assert found[1] == "arg_dropship_data.ani"  # the .ani, in the view's lower case
    s = hangar.open(f"{folder}::{found[2]}")
    assert len(s.meshes) == 1
    with pytest.raises(hangar.Error):
        hangar.models(os.path.join(folder, "nothing here"))


def test_component_of_a_data_folder_is_its_xml():
    xml = dropship()
    assert hangar.component_of(os.path.join(os.path.dirname(xml), "arg_dropship_data")) == xml
    assert hangar.component_of(os.path.dirname(xml)) is None


def test_write_round_trip_of_an_xmf(tmp_path):
    src = corpus("x4/DeadAirRT__part_main-lod0.xmf")
    s = hangar.open(src)
    out = tmp_path / "back.glb"
    hangar.write(s, out)
    again = hangar.open(out)
    np.testing.assert_allclose(again.meshes[0].positions, s.meshes[0].positions, atol=1e-6)
    assert hangar.info(out)["triangles"] == hangar.info(src)["triangles"]


def test_write_over_the_original_keeps_its_bytes_or_its_lods(tmp_path):
    # Untouched: the original's bytes, for an M3 and an actor.
    m3 = corpus("m3/ArtemKez_testMod__Devourer_CollectionSkin_Webby.m3")
    hangar.write(hangar.open(m3), tmp_path / "same.m3", original=m3)
    assert (tmp_path / "same.m3").read_bytes() == open(m3, "rb").read()
    # An actor's mesh scaled: only that mesh is written again (its values in place: the same size),
    # its five LOD actors (which the scene shows as extra meshes) and every other chunk kept.
    xac = corpus("emfx/vic2vl__Zulu_Infantry.xac")
    s = hangar.open(xac)
    s.meshes[0].positions = s.meshes[0].positions * 2
    w = hangar.write(s, tmp_path / "big.xac", original=xac)
    assert any('the mesh of node "polySurface39" changed' in x for x in w)
    assert (tmp_path / "big.xac").stat().st_size == os.path.getsize(xac)
    back = hangar.open(tmp_path / "big.xac")
    assert len(back.meshes) == len(s.meshes) == 6 and len(back.materials) == len(s.materials) == 6
    assert np.abs(back.meshes[0].positions).max() == pytest.approx(2 * np.abs(hangar.open(xac).meshes[0].positions).max(), rel=1e-5)
    np.testing.assert_array_equal(back.meshes[1].positions, s.meshes[1].positions)


def test_write_moves_one_part_of_a_component(tmp_path):
    src = dropship()
    s = hangar.open(src)
    ramp = next(n for n in s.nodes if n.name == "anim_ramp")
    ramp.translation = [ramp.translation[0], ramp.translation[1] + 1.0, ramp.translation[2]]
    # No mesh in the scene: every data file is carried from the original's folder.
    kept = hangar.Scene(name=s.name, nodes=[hangar.Node(**{**vars(n), "mesh": None, "light": None}) for n in s.nodes])
    out = tmp_path / "arg_dropship.xml"
    hangar.write(kept, out, original=src)
    data = os.path.join(os.path.dirname(src), "arg_dropship_data")
    src_files = sorted(os.listdir(data))
    out_files = sorted(os.listdir(tmp_path / "arg_dropship_data"))
    assert out_files == src_files and len(src_files) == 47
    for f in src_files:
        assert open(os.path.join(data, f), "rb").read() == (tmp_path / "arg_dropship_data" / f).read_bytes()
    a, b = open(src).read().splitlines(), out.read_text().splitlines()
    changed = [(x, y) for x, y in zip(a, b) if x != y]
    # Only the ramp's <offset> (its position and quaternion lines).
    assert len(a) == len(b) and 1 <= len(changed) <= 2
    assert all("<position" in y or "<quaternion" in y for _, y in changed)
    assert any('y="' in y and "<position" in y for _, y in changed)


def test_convert_is_the_cli_convert(tmp_path):
    src = corpus("m3/ArtemKez_testMod__Capillary_Tower.m3")
    out = tmp_path / "same.m3"
    assert hangar.convert(src, out) == []
    assert out.read_bytes() == open(src, "rb").read()
    with pytest.raises(hangar.Error, match="cannot tell what to write"):
        hangar.convert(src, tmp_path / "x.nope")


def test_convert_takes_back_what_a_glb_lost_from_the_original(tmp_path):
    src = corpus("x4/xirsoi__part_cockpit-lod0.xmf")
    glb = tmp_path / "a.glb"
    hangar.convert(src, glb)
    # A tool that kept the mesh but lost the names and extras: written back as the original's bytes.
    scene = hangar.open(glb)
    for n in scene.nodes:
        n.extras = {}
        n.name = n.name + ".001"
    hangar.write(scene, tmp_path / "b.glb")
    out = tmp_path / "back-lod0.xmf"
    hangar.convert(tmp_path / "b.glb", out, original=src)
    assert out.read_bytes() == open(src, "rb").read()
    with pytest.raises(hangar.Error, match="--original applies to a glTF input"):
        hangar.convert(src, tmp_path / "c.xmf", original=src)


def test_open_with_textures_decodes_the_materials_pictures():
    src = glob.glob(corpus("textures/ArtemKez__testMod/Base.SC2Data/Assets/Models/*.m3"))[0]
    scene = hangar.open(src, textures=True)
    named = sorted(key for m in scene.materials for _, key in m.images)
    # diffuse, normal, specular, ambient occlusion: each slot the mapping fills has its picture
    slots = sorted(slot for m in scene.materials for slot, _ in m.images)
    assert slots == ["base_color", "normal", "occlusion", "specular"]
    assert sorted(scene.pictures) == named and len(named) == 4
    m = next(m for m in scene.materials if m.normal)
    assert m.look["metallic"] == 0 and m.look["team_colour"] is True
    for png in scene.pictures.values():
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(png[16:20], "big") == 512 and int.from_bytes(png[20:24], "big") == 512
    assert hangar.open(src).pictures == {}


def test_x4_colour_sets_carry_their_roles_there_and_back(tmp_path):
    # The p2 door: COLOR0 the vertex colour, COLOR2 the multimat set (smoothness, metal, layer, dirt).
    src = corpus("x4/X4Reemergence-Project__detail_xl_door_l-lod0.xmf")
    m = hangar.open(src).meshes[0]
    assert m.color_names == ["col", "multimat"]
    layers = sorted(set(np.round(np.asarray(m.colors[1])[:, 2] * 255).astype(int).tolist()))
    assert layers == [4, 5]
    assert hangar.is_multimat("p2multimat.p2_multimat_01") and not hangar.is_multimat("p1.cockpit_glass_outside_02")
    out = tmp_path / "door.glb"
    hangar.write(hangar.open(src), out)
    back = hangar.open(out).meshes[0]
    assert back.color_names == m.color_names
    for a, b in zip(back.colors, m.colors):
        np.testing.assert_array_equal(np.round(np.asarray(a) * 255), np.round(np.asarray(b) * 255))


def dropships_template():
    found = sorted(glob.glob(corpus("x4-mods/xirsoi__dropships__dropships/assets/units/size_m/macros/ship_*_macro.xml")))
    if not found:
        pytest.skip("no dropships mod in the corpus")
    return found[0]


def box_scene():
    """A hull (a 12-triangle box, 10 m) with a tower part on it and a weapon on the tower, in glTF's frame."""
    c = np.array([[x, y, z] for x in (-5, 5) for y in (-5, 5) for z in (-5, 5)], np.float32)
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    idx = np.array([i for a, b, d, e in faces for i in (a, b, d, a, d, e)], np.uint32)
    box = hangar.Mesh(name="box", positions=c, primitives=[hangar.Primitive(indices=idx)])
    nodes = [hangar.Node(name="hull", mesh=0),
             hangar.Node(name="tower", parent=0, mesh=0, translation=(0.0, 10.0, 2.0)),
             hangar.Node(name="con_weapon_01", parent=1, translation=(3.0, 6.0, -1.0),
                         extras={"tags": "weapon medium standard", "group": "group_top"})]
    return hangar.Scene(name="box", nodes=nodes, meshes=[box])


def test_new_ship_from_a_scene_writes_the_whole_extension(tmp_path):
    out = tmp_path / "my_ship_ext"
    seen = []
    written = hangar.new_ship(box_scene(), out, dropships_template(), "ship_py_m_01", ship_name="Py Ship",
                              progress=lambda done, total: seen.append((done, total)))
    rel = sorted(os.path.relpath(p, out).replace(os.sep, "/") for p in written)
    for f in ["content.xml", "index/components.xml", "index/macros.xml", "libraries/wares.xml", "t/0001-l044.xml",
              "assets/units/size_m/ship_py_m_01.xml", "assets/units/size_m/macros/ship_py_m_01_macro.xml",
              "assets/units/size_m/ship_py_m_01_data/hull-lod0.xmf",
              "assets/units/size_m/ship_py_m_01_data/hull-collision.xmf",
              "assets/units/size_m/ship_py_m_01_data/tower-lod0.xmf",
              "assets/units/size_m/ship_py_m_01_data/tower-collision.xmf"]:
        assert f in rel and os.path.isfile(out / f)
    assert seen and seen[-1][0] == seen[-1][1]
    data = out / "assets/units/size_m/ship_py_m_01_data"
    assert hangar.info(data / "hull-lod0.xmf")["triangles"] == 12
    assert hangar.info(data / "tower-collision.xmf")["details"]["collision"] is True
    assert 'id="my_ship_ext"' in (out / "content.xml").read_text()
    assert "Py Ship" in (out / "t/0001-l044.xml").read_text()
    comp = (out / "assets/units/size_m/ship_py_m_01.xml").read_text()
    import xml.etree.ElementTree as ET
    cons = {c.get("name"): c for c in ET.fromstring(comp).iter("connection")}
    w = cons["con_weapon_01"]
    assert (w.get("tags"), w.get("parent"), w.get("group")) == ("weapon medium standard", "tower", "group_top")
    p = w.find("offset/position")
    # glTF -> X4: x mirrored.
    assert [float(p.get(k)) for k in "xyz"] == [-3.0, 6.0, -1.0]


def aquilo_template():
    found = glob.glob(corpus("x4-templates/X4Reemergence-Project__otas_shippack/assets/props/weaponsystems/guided/macros/weapon_otas_l_aquilo_macro.xml"))
    if not found:
        pytest.skip("no x4-templates in the corpus")
    return found[0]


def test_new_component_moves_and_shines(tmp_path):
    """A missile launcher whose tower part turns 90 degrees about Y in its firing state and carries a lamp."""
    import math
    import xml.etree.ElementTree as ET
    s = box_scene()
    s.nodes.append(hangar.Node(name="lamp", parent=1, translation=(1.0, 0.0, 0.0), light=0,
                               extras={"lighteffect": "1"}))
    s.lights = [hangar.Light(name="lamp", kind="point", color=(1.0, 0.5, 0.0), intensity=2.0, range=4.0)]
    h = math.sqrt(0.5)
    s.animations = [hangar.Animation(name="weapon_firing", channels=[hangar.Channel(
        node=1, property="rotation", times=np.array([0.0, 1.0], np.float32),
        values=np.array([[0, 0, 0, 1], [0, h, 0, h]], np.float32))])]
    out = tmp_path / "launcher_ext"
    written = hangar.new_component(s, out, aquilo_template(), "weapon_py_l_01", name="Py Launcher")
    rel = sorted(os.path.relpath(p, out).replace(os.sep, "/") for p in written)
    base = "assets/props/weaponsystems/guided/"
    assert base + "weapon_py_l_01.xml" in rel and base + "weapon_py_l_01_data.ani" in rel
    assert base + "macros/weapon_py_l_01_macro.xml" in rel
    comp = ET.fromstring((out / base / "weapon_py_l_01.xml").read_text()).find("component")
    assert comp.get("class") == "missilelauncher"
    anims = [(a.get("name"), a.get("start"), a.get("end")) for a in comp.iter("animation")]
    assert anims == [("weapon_firing", "0", "30")]
    lamp = comp.find(".//part[@name='tower']/lights/omni")
    assert (lamp.get("name"), lamp.get("r"), lamp.get("g"), lamp.get("b"), lamp.get("range"),
            lamp.get("intensity"), lamp.get("lighteffect")) == ("lamp", "255", "128", "0", "4", "2", "1")
    back = hangar.open(out / base / "weapon_py_l_01.xml")
    assert [a.name for a in back.animations] == ["weapon_firing"]
    assert [l.name for l in back.lights] == ["lamp"]
    with pytest.raises(hangar.Error, match="not a ship macro"):
        hangar.new_ship(s, tmp_path / "refused", aquilo_template(), "weapon_py_l_02")
    assert not (tmp_path / "refused").exists()


def test_new_component_gives_its_warnings(tmp_path):
    """A state moving a connection (no part) is written without it, and the warning names it."""
    s = box_scene()
    s.animations = [hangar.Animation(name="weapon_firing", channels=[
        hangar.Channel(node=1, property="translation", times=np.array([0.0, 1.0], np.float32),
                       values=np.array([[0, 10, 2], [0, 11, 2]], np.float32)),
        hangar.Channel(node=2, property="translation", times=np.array([0.0], np.float32),
                       values=np.array([[3, 6, -1]], np.float32), interpolation="STEP")])]
    warnings = []
    hangar.new_component(s, tmp_path / "ext", aquilo_template(), "weapon_py_l_03", warnings=warnings)
    assert any("con_weapon_01" in w and "weapon_firing" in w for w in warnings), warnings
    assert not any("tower" in w for w in warnings if "weapon_firing" in w), warnings


def test_new_ship_from_a_glb_and_its_errors(tmp_path):
    glb = tmp_path / "box.glb"
    hangar.write(box_scene(), glb)
    out = tmp_path / "from_glb"
    written = hangar.new_ship(glb, out, dropships_template(), "ship_py_m_02", lods=0)
    assert any(p.endswith("tower-lod0.xmf") for p in written)
    assert not any(p.endswith("-lod1.xmf") for p in written)
    with pytest.raises(hangar.Error, match="not empty"):
        hangar.new_ship(glb, out, dropships_template(), "ship_py_m_02")
    with pytest.raises(hangar.Error, match="id"):
        hangar.new_ship(glb, tmp_path / "bad", dropships_template(), "bad id")
    assert not (tmp_path / "bad").exists()

    def stop(done, total):
        raise KeyboardInterrupt("stopped")

    with pytest.raises(KeyboardInterrupt):
        hangar.new_ship(box_scene(), tmp_path / "stopped", dropships_template(), "ship_py_m_03", progress=stop)
    assert not (tmp_path / "stopped").exists()


def test_find_names_a_player_reads(tmp_path, monkeypatch):
    monkeypatch.setenv("HANGAR_CACHE_DIR", str(tmp_path / "cache"))
    mod = corpus("x4-mods/xirsoi__dropships__dropships")
    found = hangar.find("dropship osprey", game=mod)
    assert [(f["kind"], f["id"], f["name"]) for f in found] == [
        ("macro", "ship_tel_m_dropship_01_a_macro", "Osprey Dropship"),
        ("ware", "tel_dropship_ware", "Osprey Dropship"),
    ]
    assert found[0]["file"] == "assets/units/size_m/macros/ship_tel_m_dropship_01_a_macro.xml"
    assert found[0]["extension"] == "xirsoi__dropships__dropships"
    # Kept in the cache folder, read back the same.
    assert hangar.find("dropship osprey", game=[mod]) == found
    assert [f["id"] for f in hangar.find("Gorgon", game=mod, kind="ware")] == ["par_dropship_ware"]
    assert hangar.find("zzqx no such name", game=mod) == []
    with pytest.raises(hangar.Error, match="empty query"):
        hangar.find(" ", game=mod)
    with pytest.raises(hangar.Error, match="holds no game"):
        hangar.find("x", game=tmp_path)
    with pytest.raises(hangar.Error, match="not a kind"):
        hangar.find("x", game=mod, kind="ship")
