#!/usr/bin/env python3
"""Checks that hub_test_server.py answers in the shapes the real `huggingface_hub` client
expects, and that its fault injection behaves as documented.

Usage: python3 test_hub_server_shapes.py      (exit 0: pass, 1: fail, 77: huggingface_hub missing)
"""

import base64
import hashlib
import http.client
import importlib.util
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import unittest
from urllib.parse import urlsplit

if importlib.util.find_spec("huggingface_hub") is None:
    sys.stderr.write("SKIP: huggingface_hub is not installed (pip install huggingface_hub)\n")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "hub_test_server.py")
TOKEN = "hf_test_token"

TINY = "testorg/tiny-gguf"
OTHER = "testorg/other-gguf"
NOGGUF = "testorg/no-gguf"
GATED = "gatedorg/gated-gguf"

WORK = tempfile.mkdtemp(prefix="hub_shapes_")
REPOS = os.path.join(WORK, "repos")
CONTENT = {}  # "org/name/path" -> bytes


def _write(repo, path, data):
    full = os.path.join(REPOS, repo, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as fh:
        fh.write(data)
    if not path.startswith(".") and "/." not in path:
        CONTENT["%s/%s" % (repo, path)] = data


def gguf_header(arch, context_length):
    """A minimal GGUF v3 header (no tensors) with two metadata keys."""
    def string(t):
        b = t.encode()
        return struct.pack("<Q", len(b)) + b
    kv = string("general.architecture") + struct.pack("<I", 8) + string(arch)
    kv += string(arch + ".context_length") + struct.pack("<I", 4) + struct.pack("<I", context_length)
    return b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + kv


def make_repos():
    rnd = random.Random(1234)
    _write(TINY, "tiny-Q4_K_M.gguf", rnd.randbytes(300 * 1024))
    _write(TINY, "tiny-Q8_0.gguf", rnd.randbytes(200 * 1024))
    _write(TINY, "README.md", b"# tiny\nA fake model for tests.\n")
    _write(TINY, "sub/notes.txt", b"notes\n")
    _write(TINY, ".downloads", b"500")
    head = gguf_header("qwen2", 32768)
    _write(OTHER, "other-64k.gguf", head + rnd.randbytes(64 * 1024 - len(head)))
    _write(OTHER, ".downloads", b"100")
    _write(NOGGUF, "config.json", b"{}\n")
    _write(NOGGUF, ".downloads", b"1000")
    _write(GATED, "gated.gguf", rnd.randbytes(100 * 1024))
    _write(GATED, "README.md", b"# gated\n")
    _write(GATED, ".gated", b"")
    _write(GATED, ".downloads", b"50")
    _write(GATED, ".tags", b'["gguf", "llama", "text-generation", "conversational"]')


def sha256(b):
    return hashlib.sha256(b).hexdigest()


def git_sha1(b):
    return hashlib.sha1(b"blob %d\0" % len(b) + b).hexdigest()


make_repos()
PROC = subprocess.Popen([sys.executable, SERVER, "--repos", REPOS], stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE)
_line = PROC.stdout.readline()
try:
    URLS = json.loads(_line)
except ValueError:
    sys.stderr.write("server did not print its JSON line: %r\n" % _line)
    PROC.kill()
    sys.exit(1)
HUB, CDN = URLS["hub"], URLS["cdn"]

os.environ["HF_ENDPOINT"] = HUB
os.environ["HF_HOME"] = os.path.join(WORK, "hf_home")
os.environ["HF_HUB_CACHE"] = os.path.join(WORK, "hf_cache")
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["HF_HUB_ENABLE_HF_TRANSFER"] = "0"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
os.environ["NO_PROXY"] = "127.0.0.1,localhost"
os.environ.pop("HF_TOKEN", None)
os.environ.pop("HUGGING_FACE_HUB_TOKEN", None)

try:
    import huggingface_hub
    from huggingface_hub import HfApi, hf_hub_download
    from huggingface_hub.hf_api import RepoFile, RepoFolder
    from huggingface_hub.errors import (EntryNotFoundError, GatedRepoError, RepositoryNotFoundError)
except Exception as e:  # broken install
    sys.stderr.write("SKIP: cannot import huggingface_hub: %s\n" % e)
    PROC.kill()
    sys.exit(77)


# --------------------------------------------------------------------------- raw HTTP helpers


def request(base, method, path, headers=None, body=None, read=True):
    u = urlsplit(base)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    if not read:
        return resp, conn
    try:
        data = resp.read() if method != "HEAD" else b""
    finally:
        conn.close()
    return resp, data


def hub_json(method, path, obj=None):
    body = json.dumps(obj).encode() if obj is not None else None
    resp, data = request(HUB, method, path, {"Content-Type": "application/json"} if body else None, body)
    return resp.status, json.loads(data)


def set_faults(obj):
    status, answer = hub_json("POST", "/_test/faults", obj)
    assert status == 200, answer


def server_log():
    return hub_json("GET", "/_test/log")[1]


def cdn_location(repo, path, token=None):
    headers = {"Authorization": "Bearer " + token} if token else {}
    resp, _ = request(HUB, "HEAD", "/%s/resolve/main/%s" % (repo, path), headers)
    assert resp.status == 302, resp.status
    loc = resp.getheader("Location")
    assert loc.startswith(CDN + "/cdn/"), loc
    return loc, resp


def cdn_get(loc, headers=None, method="GET"):
    u = urlsplit(loc)
    return request(CDN, method, u.path + "?" + u.query, headers)


# --------------------------------------------------------------------------- huggingface_hub client


class A_HubClientShapes(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        hub_json("POST", "/_test/reset")
        cls.api = HfApi(endpoint=HUB)

    def cache(self):
        return tempfile.mkdtemp(dir=WORK, prefix="cache_")

    def test_list_models(self):
        models = list(self.api.list_models(search="gguf", filter="gguf", sort="downloads"))
        self.assertEqual([m.id for m in models], [TINY, OTHER, GATED])
        self.assertEqual([m.downloads for m in models], [500, 100, 50])
        self.assertEqual(models[2].gated, "manual")
        self.assertEqual(models[0].gated, False)
        self.assertIs(models[0].private, False)
        self.assertIn("gguf", models[0].tags)
        self.assertEqual(models[0].library_name, "gguf")
        self.assertEqual(models[0].pipeline_tag, "text-generation")
        self.assertIsNotNone(models[0].created_at)
        # case-insensitive search, limit, no-gguf repo only without the filter
        self.assertEqual([m.id for m in self.api.list_models(search="TINY", filter="gguf")], [TINY])
        self.assertEqual([m.id for m in self.api.list_models(filter="gguf", sort="downloads", limit=1)], [TINY])
        self.assertEqual([m.id for m in self.api.list_models(sort="downloads")][0], NOGGUF)
        self.assertEqual([m.id for m in self.api.list_models(filter=["gguf", "conversational"])], [GATED])
        self.assertEqual([m.id for m in self.api.list_models(author="gatedorg")], [GATED])
        full = list(self.api.list_models(search="tiny", full=True))
        self.assertEqual(sorted(s.rfilename for s in full[0].siblings),
                         ["README.md", "sub/notes.txt", "tiny-Q4_K_M.gguf", "tiny-Q8_0.gguf"])

    def test_model_info(self):
        info = self.api.model_info(TINY)
        self.assertEqual(info.id, TINY)
        self.assertEqual(info.sha, hashlib.sha1(TINY.encode()).hexdigest())
        self.assertEqual(info.downloads, 500)
        self.assertIn("tiny-Q4_K_M.gguf", [s.rfilename for s in info.siblings])
        info = self.api.model_info(TINY, revision=info.sha, files_metadata=True)
        sib = {s.rfilename: s for s in info.siblings}
        data = CONTENT[TINY + "/tiny-Q4_K_M.gguf"]
        self.assertEqual(sib["tiny-Q4_K_M.gguf"].lfs.sha256, sha256(data))
        self.assertEqual(sib["tiny-Q4_K_M.gguf"].size, len(data))
        self.assertIsNone(sib["README.md"].lfs)
        self.assertEqual(sib["README.md"].blob_id, git_sha1(CONTENT[TINY + "/README.md"]))
        self.assertEqual(info.gguf["architecture"], "llama")  # fake file: the default
        other = self.api.model_info(OTHER)  # read from the GGUF header
        self.assertEqual((other.gguf["architecture"], other.gguf["context_length"]), ("qwen2", 32768))
        self.assertIsNone(self.api.model_info(NOGGUF).gguf)
        gated = self.api.model_info(GATED)  # answers without a token, as the Hub does
        self.assertEqual(gated.gated, "manual")
        with self.assertRaises(RepositoryNotFoundError):
            self.api.model_info("testorg/nope")

    def test_list_repo_tree(self):
        tree = list(self.api.list_repo_tree(TINY, recursive=True))
        files = {e.path: e for e in tree if isinstance(e, RepoFile)}
        folders = [e.path for e in tree if isinstance(e, RepoFolder)]
        self.assertEqual(folders, ["sub"])
        self.assertEqual(sorted(files), ["README.md", "sub/notes.txt", "tiny-Q4_K_M.gguf", "tiny-Q8_0.gguf"])
        for name in ("tiny-Q4_K_M.gguf", "tiny-Q8_0.gguf"):
            data = CONTENT[TINY + "/" + name]
            self.assertEqual(files[name].lfs.sha256, sha256(data))
            self.assertEqual(files[name].lfs.size, len(data))
            self.assertEqual(files[name].size, len(data))
            self.assertGreater(files[name].lfs.pointer_size, 100)
        self.assertIsNone(files["README.md"].lfs)
        self.assertEqual(files["README.md"].blob_id, git_sha1(CONTENT[TINY + "/README.md"]))
        top = [e.path for e in self.api.list_repo_tree(TINY)]
        self.assertIn("sub", top)
        self.assertNotIn("sub/notes.txt", top)
        self.assertEqual([e.path for e in self.api.list_repo_tree(TINY, path_in_repo="sub")], ["sub/notes.txt"])
        with self.assertRaises(GatedRepoError):
            list(self.api.list_repo_tree(GATED, recursive=True, token=False))
        gated = [e.path for e in self.api.list_repo_tree(GATED, recursive=True, token=TOKEN)]
        self.assertIn("gated.gguf", gated)

    def _check_cache(self, cache, repo, filename, path, etag):
        commit = hashlib.sha1(repo.encode()).hexdigest()
        folder = os.path.join(cache, "models--" + repo.replace("/", "--"))
        blob = os.path.join(folder, "blobs", etag)
        snap = os.path.join(folder, "snapshots", commit, filename)
        self.assertEqual(os.path.realpath(path), os.path.realpath(snap))
        self.assertTrue(os.path.islink(snap), snap)
        self.assertEqual(os.path.realpath(snap), os.path.realpath(blob))
        with open(os.path.join(folder, "refs", "main")) as fh:
            self.assertEqual(fh.read(), commit)
        with open(path, "rb") as fh:
            self.assertEqual(fh.read(), CONTENT[repo + "/" + filename])

    def test_hf_hub_download_lfs_and_small(self):
        cache = self.cache()
        p = hf_hub_download(TINY, "tiny-Q4_K_M.gguf", cache_dir=cache)
        self._check_cache(cache, TINY, "tiny-Q4_K_M.gguf", p, sha256(CONTENT[TINY + "/tiny-Q4_K_M.gguf"]))
        p = hf_hub_download(TINY, "README.md", cache_dir=cache)
        self._check_cache(cache, TINY, "README.md", p, git_sha1(CONTENT[TINY + "/README.md"]))
        p = hf_hub_download(TINY, "sub/notes.txt", cache_dir=cache)
        self._check_cache(cache, TINY, "sub/notes.txt", p, git_sha1(CONTENT[TINY + "/sub/notes.txt"]))

    def test_gated_and_errors(self):
        cache = self.cache()
        with self.assertRaises(GatedRepoError) as cm:
            hf_hub_download(GATED, "gated.gguf", cache_dir=cache, token=False)
        self.assertEqual(cm.exception.response.status_code, 401)
        with self.assertRaises(GatedRepoError) as cm:
            hf_hub_download(GATED, "gated.gguf", cache_dir=cache, token="hf_wrong_token")
        self.assertEqual(cm.exception.response.status_code, 403)
        p = hf_hub_download(GATED, "gated.gguf", cache_dir=cache, token=TOKEN)
        self._check_cache(cache, GATED, "gated.gguf", p, sha256(CONTENT[GATED + "/gated.gguf"]))
        with self.assertRaises(EntryNotFoundError):
            hf_hub_download(TINY, "missing.gguf", cache_dir=cache)
        with self.assertRaises(RepositoryNotFoundError):
            hf_hub_download("testorg/nope", "x.gguf", cache_dir=cache)
        log = server_log()
        cdn = [e for e in log if e["listener"] == "cdn"]
        self.assertTrue(cdn, "no request reached the CDN")
        self.assertFalse(any(e["authorization"] for e in cdn), cdn)
        self.assertTrue(any(e["authorization"] and "/gated-gguf/resolve/" in e["path"] for e in log))

    def test_snapshot_download(self):
        cache = self.cache()
        folder = huggingface_hub.snapshot_download(TINY, cache_dir=cache)
        with open(os.path.join(folder, "tiny-Q8_0.gguf"), "rb") as fh:
            self.assertEqual(fh.read(), CONTENT[TINY + "/tiny-Q8_0.gguf"])

    def test_z_cdn_never_saw_authorization(self):
        self.assertFalse(any(e["authorization"] for e in server_log() if e["listener"] == "cdn"))


# --------------------------------------------------------------------------- server faults


class B_ServerFaults(unittest.TestCase):
    def setUp(self):
        hub_json("POST", "/_test/reset")

    def test_drop_after(self):
        data = CONTENT[TINY + "/tiny-Q4_K_M.gguf"]
        loc, _ = cdn_location(TINY, "tiny-Q4_K_M.gguf")
        set_faults({"drop_after": {"bytes": 1000, "times": 1}})
        with self.assertRaises(http.client.IncompleteRead) as cm:
            cdn_get(loc)
        self.assertEqual(len(cm.exception.partial), 1000)
        self.assertEqual(cm.exception.partial, data[:1000])
        resp, body = cdn_get(loc, {"Range": "bytes=1000-"})
        self.assertEqual(resp.status, 206)
        self.assertEqual(body, data[1000:])
        entries = [e for e in server_log() if e["listener"] == "cdn"]
        self.assertEqual([(e["status"], e["bytes_sent"], e["range"]) for e in entries],
                         [(200, 1000, None), (206, len(data) - 1000, "bytes=1000-")])

    def test_range_and_if_range(self):
        data = CONTENT[TINY + "/tiny-Q8_0.gguf"]
        n = len(data)
        loc, head = cdn_location(TINY, "tiny-Q8_0.gguf")
        self.assertEqual(head.getheader("X-Linked-Etag"), '"%s"' % sha256(data))
        self.assertEqual(head.getheader("X-Linked-Size"), str(n))
        self.assertEqual(head.getheader("X-Repo-Commit"), hashlib.sha1(TINY.encode()).hexdigest())
        self.assertEqual(head.getheader("Content-Length"), "0")
        resp, body = cdn_get(loc)
        self.assertEqual(resp.status, 200)
        self.assertEqual(body, data)
        self.assertEqual(resp.getheader("ETag"), '"%s"' % sha256(data))
        self.assertEqual(resp.getheader("Accept-Ranges"), "bytes")
        self.assertEqual(resp.getheader("Content-Type"), "application/octet-stream")
        resp, body = cdn_get(loc, {"Range": "bytes=100-199"})
        self.assertEqual((resp.status, resp.getheader("Content-Range")), (206, "bytes 100-199/%d" % n))
        self.assertEqual(body, data[100:200])
        resp, body = cdn_get(loc, {"Range": "bytes=100-", "If-Range": '"%s"' % sha256(data)})
        self.assertEqual((resp.status, resp.getheader("Content-Range")), (206, "bytes 100-%d/%d" % (n - 1, n)))
        self.assertEqual(body, data[100:])
        resp, body = cdn_get(loc, {"Range": "bytes=100-", "If-Range": '"%s"' % ("0" * 64)})
        self.assertEqual(resp.status, 200)
        self.assertEqual(body, data)
        resp, body = cdn_get(loc, {"Range": "bytes=%d-" % n})
        self.assertEqual((resp.status, resp.getheader("Content-Range")), (416, "bytes */%d" % n))
        resp, body = cdn_get(loc, {"Range": "bytes=%d-" % (n + 5)})
        self.assertEqual(resp.status, 416)

    def test_ignore_range(self):
        data = CONTENT[TINY + "/tiny-Q8_0.gguf"]
        loc, _ = cdn_location(TINY, "tiny-Q8_0.gguf")
        set_faults({"ignore_range": True})
        resp, body = cdn_get(loc, {"Range": "bytes=100-199"})
        self.assertEqual(resp.status, 200)
        self.assertIsNone(resp.getheader("Content-Range"))
        self.assertEqual(body, data)

    def test_status_429_retry_after(self):
        set_faults({"status": {"code": 429, "times": 1, "retry_after": 1, "where": "api"}})
        resp, body = request(HUB, "GET", "/api/models?search=tiny")
        self.assertEqual(resp.status, 429)
        self.assertEqual(resp.getheader("Retry-After"), "1")
        self.assertIn("error", json.loads(body))
        resp, body = request(HUB, "GET", "/api/models?search=tiny")
        self.assertEqual(resp.status, 200)
        set_faults({"status": {"code": 503, "times": 2, "where": "cdn"}})
        loc, _ = cdn_location(TINY, "tiny-Q8_0.gguf")  # the hub is not affected
        self.assertEqual(cdn_get(loc)[0].status, 503)
        self.assertEqual(cdn_get(loc)[0].status, 503)
        self.assertEqual(cdn_get(loc)[0].status, 200)

    def test_rate(self):
        data = CONTENT[OTHER + "/other-64k.gguf"]
        loc, _ = cdn_location(OTHER, "other-64k.gguf")
        set_faults({"rate": 32768})
        t0 = time.monotonic()
        resp, body = cdn_get(loc)
        took = time.monotonic() - t0
        self.assertEqual(body, data)
        self.assertTrue(1.6 <= took <= 3.5, "64 KiB at 32 KiB/s took %.2f s" % took)

    def test_rate_client_cancel(self):
        loc, _ = cdn_location(OTHER, "other-64k.gguf")
        set_faults({"rate": 16384})
        u = urlsplit(loc)
        resp, conn = request(CDN, "GET", u.path + "?" + u.query, read=False)
        self.assertEqual(len(resp.read(2048)), 2048)
        conn.sock.close()
        conn.close()
        entry = [e for e in server_log() if e["listener"] == "cdn"][-1]  # waits for it to end
        self.assertTrue(entry["done"], entry)
        self.assertLess(entry["bytes_sent"], 64 * 1024 // 2, entry)

    def test_wrong_sha256(self):
        key = TINY + "/tiny-Q8_0.gguf"
        data = CONTENT[key]
        wrong = sha256(data + b"x")
        set_faults({"wrong_sha256": [key]})
        _, tree = hub_json("GET", "/api/models/%s/tree/main" % TINY)
        self.assertEqual({e["path"]: e.get("lfs", {}).get("oid") for e in tree}["tiny-Q8_0.gguf"], wrong)
        loc, head = cdn_location(TINY, "tiny-Q8_0.gguf")
        self.assertEqual(head.getheader("X-Linked-Etag"), '"%s"' % wrong)
        self.assertIn("/cdn/" + wrong, loc)
        resp, body = cdn_get(loc)
        self.assertEqual(resp.getheader("ETag"), '"%s"' % wrong)
        self.assertEqual(body, data)

    def test_no_redirect(self):
        data = CONTENT[TINY + "/tiny-Q8_0.gguf"]
        set_faults({"no_redirect": True})
        resp, _ = request(HUB, "HEAD", "/%s/resolve/main/tiny-Q8_0.gguf" % TINY)
        self.assertEqual(resp.status, 200)
        self.assertEqual(resp.getheader("Content-Length"), str(len(data)))
        self.assertEqual(resp.getheader("X-Linked-Etag"), '"%s"' % sha256(data))
        self.assertEqual(resp.getheader("X-Linked-Size"), str(len(data)))
        self.assertIsNotNone(resp.getheader("X-Repo-Commit"))
        resp, body = request(HUB, "GET", "/%s/resolve/main/tiny-Q8_0.gguf" % TINY, {"Range": "bytes=10-"})
        self.assertEqual(resp.status, 206)
        self.assertEqual(body, data[10:])

    def test_replace(self):
        key = TINY + "/tiny-Q8_0.gguf"
        old = CONTENT[key]
        loc, _ = cdn_location(TINY, "tiny-Q8_0.gguf")
        new = b"new content " * 200
        set_faults({"replace": {key: base64.b64encode(new).decode()}})
        _, tree = hub_json("GET", "/api/models/%s/tree/main" % TINY)
        entry = {e["path"]: e for e in tree}["tiny-Q8_0.gguf"]
        self.assertEqual((entry["lfs"]["oid"], entry["size"]), (sha256(new), len(new)))
        resp, body = cdn_get(loc, {"Range": "bytes=100-", "If-Range": '"%s"' % sha256(old)})
        self.assertEqual(resp.status, 200)
        self.assertEqual(resp.getheader("ETag"), '"%s"' % sha256(new))
        self.assertEqual(body, new)
        hub_json("POST", "/_test/reset")
        _, tree = hub_json("GET", "/api/models/%s/tree/main" % TINY)
        self.assertEqual({e["path"]: e for e in tree}["tiny-Q8_0.gguf"]["lfs"]["oid"], sha256(old))

    def test_error_shapes(self):
        resp, body = request(HUB, "GET", "/api/models/testorg/nope")
        self.assertEqual((resp.status, resp.getheader("X-Error-Code")), (404, "RepoNotFound"))
        self.assertIn("error", json.loads(body))
        resp, body = request(HUB, "HEAD", "/%s/resolve/main/nope.gguf" % TINY)
        self.assertEqual((resp.status, resp.getheader("X-Error-Code")), (404, "EntryNotFound"))
        self.assertIsNotNone(resp.getheader("X-Repo-Commit"))
        resp, body = request(HUB, "GET", "/%s/resolve/main/gated.gguf" % GATED)
        self.assertEqual((resp.status, resp.getheader("X-Error-Code")), (401, "GatedRepo"))
        self.assertIn("restricted", json.loads(body)["error"])
        resp, body = request(HUB, "GET", "/%s/resolve/main/gated.gguf" % GATED, {"Authorization": "Bearer hf_x"})
        self.assertEqual((resp.status, resp.getheader("X-Error-Code")), (403, "GatedRepo"))
        self.assertIn("authorized list", json.loads(body)["error"])
        resp, body = request(HUB, "GET", "/api/models/%s/tree/main" % GATED)
        self.assertEqual(resp.status, 401)
        resp, body = request(HUB, "POST", "/_test/faults", body=b'{"bogus": 1}')
        self.assertEqual(resp.status, 400)


def main():
    print("huggingface_hub %s, server %s / %s" % (huggingface_hub.__version__, HUB, CDN))
    try:
        result = unittest.main(exit=False, verbosity=2).result
        ok = result.wasSuccessful()
    finally:
        PROC.stdin.close()  # EOF on stdin stops the server
        try:
            PROC.wait(timeout=10)
        except subprocess.TimeoutExpired:
            print("server did not stop on stdin EOF")
            ok = False
            PROC.kill()
            PROC.wait()
        PROC.stdout.close()
        shutil.rmtree(WORK, ignore_errors=True)
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
