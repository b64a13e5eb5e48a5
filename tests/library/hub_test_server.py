#!/usr/bin/env python3
"""Loopback imitation of the Hugging Face Hub (API + file downloads + a CDN).

Test fixture for LlamaDesk's model library: the C++ downloader (QNetworkAccessManager)
is tested against it, and the real `huggingface_hub` client works against it when
HF_ENDPOINT points at the "hub" URL. Python 3.11 standard library only.

Where the response shapes come from (read, not copied):
  * huggingface_hub (checked against 2.4.0), file_download.py:
      - get_hf_file_metadata(): the HEAD /resolve call; reads X-Repo-Commit,
        X-Linked-Etag (falls back to ETag), X-Linked-Size (falls back to Content-Length
        when the answer is not a redirect) and Location.
      - _get_metadata_or_catch_error(): the Authorization header is dropped when the
        Location is on another host; X-Repo-Commit is read from a 404 EntryNotFound.
      - http_get(): the GET on the Location, resumes with "Range: bytes=N-" after a
        dropped connection, restarts from zero when a Range request gets a 200.
      - _hf_hub_download_to_cache_dir(): blobs/<etag>, snapshots/<commit>/<file>, refs/<rev>.
  * huggingface_hub utils/_http.py:
      - _httpx2_follow_hub_redirects_with_backoff(): HEAD follows only same-host/Hub-host
        redirects; a cross-host 302 is returned as is.
      - hf_raise_for_status(): X-Error-Code values RepoNotFound, RevisionNotFound,
        EntryNotFound, GatedRepo; X-Error-Message; JSON {"error": ...} body.
      - _http_backoff_base(): Retry-After on 429/5xx.
  * huggingface_hub hf_api.py:
      - HfApi.list_models() (params search/author/filter/sort/limit/full/config/expand,
        Link-header pagination in utils/_pagination.py) and ModelInfo.__init__ (field names:
        _id, id, modelId, likes, downloads, trendingScore, private, gated, tags,
        pipeline_tag, library_name, createdAt, lastModified, sha, siblings).
      - HfApi.model_info() (/api/models/{id}[/revision/{rev}], ?blobs=true gives
        siblings with size/blobId/lfs{sha256,size,pointerSize}).
      - HfApi._iter_repo_tree_pages(), RepoFile.__init__, RepoFolder.__init__
        (/api/models/{id}/tree/{rev}[/{path}]?recursive=..; type/oid/size/path/lfs{oid,size,pointerSize}).
  * Hub API docs: https://huggingface.co/docs/hub/api ("Repo listing API": GET /api/models
    with search, author, filter, sort, direction, limit, full, config; GET /api/models/{repo_id};
    GET /api/models/{repo_id}/revision/{revision}; GET /api/models/{repo_id}/tree/{revision}/{path}).
  * Git LFS pointer format: https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md
    (the tree "oid" of an LFS file is the git blob sha1 of its pointer file).

Usage:
  python3 hub_test_server.py --repos DIR [--port 0] [--cdn-port 0] [--verbose] [--ignore-stdin]

DIR/<org>/<name>/<files> are the repositories (names starting with '.' are not files). Optional
markers in a repo folder: .gated (needs "Authorization: Bearer hf_test_token" for files and tree),
.downloads (an integer), .tags (a JSON list; default ["gguf", "llama", "text-generation"]),
.architecture (text; the model info "gguf.architecture", else read from the first .gguf file's
GGUF header, else "llama"). Files over 1 KiB and every .gguf are served as LFS files (redirect
to the CDN); smaller files are served by /resolve itself.

Prints one JSON line {"hub": "http://127.0.0.1:P", "cdn": "http://localhost:Q"} once both
listeners are up, then serves until SIGTERM/SIGINT or until stdin reaches EOF.
Test control (hub listener only): POST /_test/faults, POST /_test/reset, GET /_test/log,
GET /_test/faults. See the fault list in parse_faults(). GET /_test/log answers once no request is
still being answered (3 s at most).
"""

import argparse
import base64
import binascii
import hashlib
import json
import os
import re
import select
import signal
import socket
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlsplit

TEST_TOKEN = "hf_test_token"
DEFAULT_TAGS = ["gguf", "llama", "text-generation"]
FIXED_DATE = "2024-01-01T00:00:00.000Z"
LFS_THRESHOLD = 1024  # bytes; larger files (and every .gguf) are stored as LFS
CHUNK = 64 * 1024

VERBOSE = False


def log_err(msg):
    if VERBOSE:
        sys.stderr.write(msg + "\n")
        sys.stderr.flush()


# --------------------------------------------------------------------------- repository model


class RepoFile:
    """One file of a repository; content is on disk, or in memory after a "replace" fault."""

    def __init__(self, path, disk_path=None, data=None):
        self.path = path
        self.disk_path = disk_path
        self.data = data
        sha256 = hashlib.sha256()
        if data is not None:
            self.size = len(data)
            sha256.update(data)
            blob = hashlib.sha1(b"blob %d\0" % self.size)
            blob.update(data)
        else:
            self.size = os.path.getsize(disk_path)
            blob = hashlib.sha1(b"blob %d\0" % self.size)
            with open(disk_path, "rb") as fh:
                while True:
                    chunk = fh.read(1 << 20)
                    if not chunk:
                        break
                    sha256.update(chunk)
                    blob.update(chunk)
        wrong = sha256.copy()
        wrong.update(b"x")
        self.sha256 = sha256.hexdigest()
        self.wrong_sha256 = wrong.hexdigest()  # announced under the wrong_sha256 fault
        self.git_sha1 = blob.hexdigest()
        self.lfs = self.size > LFS_THRESHOLD or path.lower().endswith(".gguf")

    def pointer(self, announced_sha256):
        return ("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n"
                % (announced_sha256, self.size)).encode()

    def pointer_oid(self, announced_sha256):
        p = self.pointer(announced_sha256)
        return hashlib.sha1(b"blob %d\0" % len(p) + p).hexdigest()

    def iter_range(self, start, length, chunk_size):
        if self.data is not None:
            view = memoryview(self.data)
            pos, end = start, start + length
            while pos < end:
                n = min(chunk_size, end - pos)
                yield bytes(view[pos:pos + n])
                pos += n
            return
        with open(self.disk_path, "rb") as fh:
            fh.seek(start)
            left = length
            while left > 0:
                chunk = fh.read(min(chunk_size, left))
                if not chunk:
                    break
                left -= len(chunk)
                yield chunk


def read_gguf_metadata(path, limit=32 << 20):
    """general.architecture and <arch>.context_length from a GGUF header, or {} (fake files)."""
    import struct
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    out = {}
    try:
        with open(path, "rb") as fh:
            def take(n):
                if fh.tell() + n > limit:
                    raise ValueError("header too large")
                b = fh.read(n)
                if len(b) != n:
                    raise ValueError("short")
                return b

            def u32():
                return struct.unpack("<I", take(4))[0]

            def u64():
                return struct.unpack("<Q", take(8))[0]

            def string():
                return take(u64()).decode("utf-8", "replace")

            def value(t):
                if t in sizes:
                    raw = take(sizes[t])
                    fmt = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?",
                           10: "Q", 11: "q", 12: "d"}[t]
                    return struct.unpack("<" + fmt, raw)[0]
                if t == 8:
                    return string()
                if t == 9:
                    et, n = u32(), u64()
                    if et in sizes:
                        take(sizes[et] * n)
                    else:
                        for _ in range(n):
                            value(et)
                    return None
                raise ValueError("bad type %d" % t)

            if take(4) != b"GGUF" or u32() < 2:
                return {}
            u64()  # tensor count
            kv = {}
            for _ in range(u64()):
                key = string()
                kv[key] = value(u32())
            arch = kv.get("general.architecture")
            if isinstance(arch, str):
                out["architecture"] = arch
                ctx = kv.get(arch + ".context_length")
                if isinstance(ctx, int):
                    out["context_length"] = ctx
    except (OSError, ValueError, struct.error, MemoryError):
        return out
    return out


class Repo:
    def __init__(self, root, org, name):
        self.org, self.name = org, name
        self.id = "%s/%s" % (org, name)
        self.sha = hashlib.sha1(self.id.encode()).hexdigest()
        self.object_id = hashlib.sha1(("_id:" + self.id).encode()).hexdigest()[:24]
        folder = os.path.join(root, org, name)
        self.gated = os.path.exists(os.path.join(folder, ".gated"))
        self.downloads = 0
        try:
            with open(os.path.join(folder, ".downloads")) as fh:
                self.downloads = int(fh.read().strip() or 0)
        except (OSError, ValueError):
            pass
        self.tags = list(DEFAULT_TAGS)
        try:
            with open(os.path.join(folder, ".tags")) as fh:
                tags = json.load(fh)
            if isinstance(tags, list):
                self.tags = [str(t) for t in tags]
        except (OSError, ValueError):
            pass
        self.likes = 0
        self.architecture = None
        try:
            with open(os.path.join(folder, ".architecture")) as fh:
                self.architecture = fh.read().strip() or None
        except OSError:
            pass
        self.files = {}
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for fn in sorted(filenames):
                if fn.startswith("."):
                    continue
                full = os.path.join(dirpath, fn)
                rel = os.path.relpath(full, folder).replace(os.sep, "/")
                self.files[rel] = RepoFile(rel, disk_path=full)
        ggufs = sorted(p for p in self.files if p.lower().endswith(".gguf"))
        self.gguf_header = read_gguf_metadata(self.files[ggufs[0]].disk_path) if ggufs else {}

    def gguf_info(self):
        """The model info "gguf" block (the Hub reads it from the GGUF header), or None."""
        ggufs = sorted(p for p in self.files if p.lower().endswith(".gguf"))
        if not ggufs:
            return None
        info = dict(self.gguf_header)
        if self.architecture:
            info["architecture"] = self.architecture
        info.setdefault("architecture", "llama")
        info["total"] = 0
        return info

    @property
    def gated_value(self):
        return "manual" if self.gated else False

    def dirs(self):
        out = set()
        for p in self.files:
            parts = p.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                out.add("/".join(parts[:i]))
        return out

    def has_gguf(self):
        return any(p.lower().endswith(".gguf") for p in self.files)


# --------------------------------------------------------------------------- faults


class FaultError(ValueError):
    pass


def _times(v, key):
    t = v.get("times", 1)
    if not isinstance(t, int) or isinstance(t, bool) or (t < 1 and t != -1):
        raise FaultError("%s.times must be a positive integer or -1" % key)
    return t


def parse_faults(obj):
    """Validate a fault object. Keys (all optional):
      drop_after  {"bytes": N, "times": 1}         (a bare integer N means {"bytes": N})
      wrong_sha256 ["org/name/path", ...]
      ignore_range true
      rate        B  (bytes per second; 0/null = off)
      status      {"code": C, "times": 1, "retry_after": S, "where": "api"|"resolve"|"cdn"|"any",
                   "error_code": "X-Error-Code value", "message": "text"}
      no_redirect true
      replace     {"org/name/path": "base64 bytes"}
      cdn_redirect {"times": 1}  (the CDN sends a GET on to itself with a 302 once more, as a
                                  signed URL's second hop)
    """
    if not isinstance(obj, dict):
        raise FaultError("faults must be a JSON object")
    known = {"drop_after", "wrong_sha256", "ignore_range", "rate", "status", "no_redirect", "replace", "cdn_redirect"}
    unknown = set(obj) - known
    if unknown:
        raise FaultError("unknown fault keys: %s" % ", ".join(sorted(unknown)))
    out = {}
    if obj.get("drop_after") is not None:
        v = obj["drop_after"]
        if isinstance(v, int) and not isinstance(v, bool):
            v = {"bytes": v}
        if not isinstance(v, dict) or not isinstance(v.get("bytes"), int) or v["bytes"] < 0:
            raise FaultError("drop_after must be {\"bytes\": N>=0, \"times\": T}")
        out["drop_after"] = {"bytes": v["bytes"], "times": _times(v, "drop_after")}
    if obj.get("wrong_sha256") is not None:
        v = obj["wrong_sha256"]
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list) or not all(isinstance(s, str) for s in v):
            raise FaultError("wrong_sha256 must be a list of \"org/name/path\" strings")
        out["wrong_sha256"] = set(v)
    if obj.get("ignore_range"):
        out["ignore_range"] = True
    if obj.get("rate"):
        v = obj["rate"]
        if not isinstance(v, (int, float)) or isinstance(v, bool) or v <= 0:
            raise FaultError("rate must be a positive number of bytes per second")
        out["rate"] = float(v)
    if obj.get("status") is not None:
        v = obj["status"]
        if isinstance(v, int) and not isinstance(v, bool):
            v = {"code": v}
        if not isinstance(v, dict) or not isinstance(v.get("code"), int) or not 100 <= v["code"] <= 599:
            raise FaultError("status must be {\"code\": C, ...}")
        where = v.get("where", "any")
        if where not in ("api", "resolve", "cdn", "any"):
            raise FaultError("status.where must be api, resolve, cdn or any")
        ra = v.get("retry_after")
        out["status"] = {"code": v["code"], "times": _times(v, "status"), "where": where,
                         "retry_after": None if ra is None else str(ra),
                         "error_code": v.get("error_code"), "message": v.get("message")}
    if obj.get("no_redirect"):
        out["no_redirect"] = True
    if obj.get("cdn_redirect") is not None:
        v = obj["cdn_redirect"]
        if not isinstance(v, dict):
            v = {}
        out["cdn_redirect"] = {"times": _times(v, "cdn_redirect")}
    if obj.get("replace") is not None:
        v = obj["replace"]
        if not isinstance(v, dict):
            raise FaultError("replace must be {\"org/name/path\": \"base64\"}")
        rep = {}
        for k, b64 in v.items():
            try:
                rep[k] = base64.b64decode(b64, validate=True)
            except (binascii.Error, TypeError, ValueError):
                raise FaultError("replace[%s] is not valid base64" % k)
        out["replace"] = rep
    return out


def faults_to_json(f):
    out = {}
    for k, v in f.items():
        if k == "wrong_sha256":
            out[k] = sorted(v)
        elif k == "replace":
            out[k] = sorted(v)
        else:
            out[k] = v
    return out


class State:
    def __init__(self, root):
        self.lock = threading.Lock()
        self.entry_done = threading.Condition(self.lock)
        self.repos = {}
        for org in sorted(os.listdir(root)):
            if org.startswith(".") or not os.path.isdir(os.path.join(root, org)):
                continue
            for name in sorted(os.listdir(os.path.join(root, org))):
                if name.startswith(".") or not os.path.isdir(os.path.join(root, org, name)):
                    continue
                repo = Repo(root, org, name)
                self.repos[repo.id] = repo
        self.faults = {}
        self.originals = {}  # (repo_id, path) -> RepoFile or None, to undo "replace" on reset
        self.log = []
        self.hub_base = ""
        self.cdn_base = ""

    # -- faults
    def set_faults(self, faults):
        with self.lock:
            for key in faults.get("replace", {}):
                if self.split_key(key)[0] is None:
                    raise FaultError("replace: no repository for %s (want org/name/path)" % key)
            for key, data in faults.get("replace", {}).items():
                repo, path = self.split_key(key)
                if (repo.id, path) not in self.originals:
                    self.originals[(repo.id, path)] = repo.files.get(path)
                repo.files[path] = RepoFile(path, data=data)
            self.faults = faults

    def split_key(self, key):
        parts = key.split("/")
        if len(parts) < 3:
            return None, None
        repo = self.repos.get("/".join(parts[:2]))
        return repo, "/".join(parts[2:])

    def reset(self):
        with self.lock:
            for (repo_id, path), orig in self.originals.items():
                repo = self.repos[repo_id]
                if orig is None:
                    repo.files.pop(path, None)
                else:
                    repo.files[path] = orig
            self.originals.clear()
            self.faults = {}
            self.log = []

    def take(self, key):
        """Consume one use of a counted fault; returns its dict or None."""
        with self.lock:
            f = self.faults.get(key)
            if f is None:
                return None
            if f["times"] != -1:
                f["times"] -= 1
                if f["times"] <= 0:
                    del self.faults[key]
            return dict(f)

    def take_status(self, where):
        with self.lock:
            f = self.faults.get("status")
            if f is None or (f["where"] != "any" and f["where"] != where):
                return None
        return self.take("status")

    def flag(self, key):
        with self.lock:
            return self.faults.get(key)

    def announced_sha256(self, repo, f):
        with self.lock:
            wrong = "%s/%s" % (repo.id, f.path) in self.faults.get("wrong_sha256", ())
        return f.wrong_sha256 if wrong else f.sha256

    def new_log_entry(self, entry):
        with self.lock:
            self.log.append(entry)

    def end_log_entry(self, entry):
        with self.lock:
            entry["done"] = True
            self.entry_done.notify_all()

    def log_snapshot(self, settle_s=3.0):
        """The log once no request is still being answered (or after settle_s): a client that has
        read a whole body can ask at once, before the server's thread counted its last write."""
        with self.lock:
            self.entry_done.wait_for(lambda: all(e["done"] for e in self.log), settle_s)
            return [dict(e) for e in self.log]

    def find_for_cdn(self, sha, repo_id, path):
        with self.lock:
            repo = self.repos.get(repo_id) if repo_id else None
            if repo is not None and path in repo.files:
                return repo, repo.files[path]
            for repo in self.repos.values():
                for f in repo.files.values():
                    if f.lfs and sha in (f.sha256, f.wrong_sha256):
                        return repo, f
        return None, None


# --------------------------------------------------------------------------- HTTP


class _Dropped(Exception):
    pass


class _ClientGone(Exception):
    pass


def _norm_etag(v):
    v = (v or "").strip()
    if v.startswith("W/"):
        v = v[2:]
    return v.strip('"')


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hub-test-server/1"
    timeout = 60  # idle keep-alive connections and stuck writes
    _entry = None  # the request's log entry (None for /_test/* and malformed requests)

    # ---- plumbing
    def log_message(self, fmt, *args):
        log_err("[%s] %s" % (self.server.role, fmt % args))

    def send_response(self, code, message=None):
        if self._entry is not None:
            self._entry["status"] = code
        super().send_response(code, message)

    def do_GET(self):
        self._dispatch("GET")

    def do_HEAD(self):
        self._dispatch("HEAD")

    def do_POST(self):
        self._dispatch("POST")

    def _dispatch(self, method):
        self._entry = None
        state = self.server.state
        split = urlsplit(self.path)
        self._split = split
        self._query = parse_qs(split.query, keep_blank_values=True)
        self._method = method
        is_test = self.server.role == "hub" and split.path.startswith("/_test/")
        if not is_test:
            self._entry = {
                "listener": self.server.role,
                "method": method,
                "path": self.path,
                "range": self.headers.get("Range"),
                "if_range": self.headers.get("If-Range"),
                "authorization": self.headers.get("Authorization") is not None,
                "status": None,
                "bytes_sent": 0,
                "done": False,
            }
            state.new_log_entry(self._entry)
        try:
            body = b""
            n = int(self.headers.get("Content-Length") or 0)
            if n > 0:
                body = self.rfile.read(n)
            if is_test:
                self._route_test(method, split.path, body)
            elif self.server.role == "cdn":
                self._route_cdn(method, split.path)
            else:
                self._route_hub(method, split.path)
        except _Dropped:
            self.close_connection = True
        except (_ClientGone, BrokenPipeError, ConnectionResetError, socket.timeout, OSError) as e:
            log_err("[%s] client gone during %s %s: %r" % (self.server.role, method, self.path, e))
            self.close_connection = True
        finally:
            if self._entry is not None:
                state.end_log_entry(self._entry)

    def finish(self):
        try:
            super().finish()
        except OSError:
            pass

    # ---- response helpers
    def _headers_out(self, status, headers, length):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(length))
        self.end_headers()

    def _send(self, status, body=b"", headers=(), content_type=None):
        hdrs = list(headers)
        if content_type:
            hdrs.append(("Content-Type", content_type))
        self._headers_out(status, hdrs, len(body))
        if self._method != "HEAD" and body:
            self.wfile.write(body)
            if self._entry is not None:
                self._entry["bytes_sent"] += len(body)

    def _json(self, status, obj, headers=()):
        body = json.dumps(obj).encode()
        self._send(status, body, headers, "application/json; charset=utf-8")

    def _error(self, status, message, code=None, headers=()):
        hdrs = list(headers)
        if code:
            hdrs.append(("X-Error-Code", code))
        hdrs.append(("X-Error-Message", message))
        self._json(status, {"error": message}, hdrs)

    def _auth_token(self):
        auth = self.headers.get("Authorization")
        if auth is None:
            return None
        scheme, _, token = auth.partition(" ")
        return token.strip() if scheme.lower() == "bearer" else auth

    def _check_gated(self, repo, extra_headers=()):
        """True when the request may read the repo's files; otherwise answers the error."""
        if not repo.gated:
            return True
        token = self._auth_token()
        if token == TEST_TOKEN:
            return True
        if token is None:
            self._error(401, "Access to model %s is restricted. You must have access to it and be "
                             "authenticated to access it. Please log in." % repo.id, "GatedRepo", extra_headers)
        else:
            self._error(403, "Access to model %s is restricted and you are not in the authorized list. "
                             "Visit %s/%s to accept the conditions and ask for access."
                        % (repo.id, self.server.state.hub_base, repo.id), "GatedRepo", extra_headers)
        return False

    def _status_fault(self, where):
        f = self.server.state.take_status(where)
        if f is None:
            return False
        hdrs = []
        if f["retry_after"] is not None:
            hdrs.append(("Retry-After", f["retry_after"]))
        msg = f["message"] or "Injected error %d by hub_test_server" % f["code"]
        self._error(f["code"], msg, f["error_code"], hdrs)
        return True

    # ---- /_test
    def _route_test(self, method, path, body):
        state = self.server.state
        if path == "/_test/faults" and method == "POST":
            try:
                faults = parse_faults(json.loads(body.decode() or "{}"))
                state.set_faults(faults)
            except (FaultError, ValueError) as e:
                self._json(400, {"error": str(e)})
                return
            self._json(200, {"ok": True, "faults": faults_to_json(faults)})
        elif path == "/_test/faults" and method == "GET":
            with state.lock:
                f = faults_to_json(state.faults)
            self._json(200, f)
        elif path == "/_test/reset" and method == "POST":
            state.reset()
            self._json(200, {"ok": True})
        elif path == "/_test/log" and method == "GET":
            self._json(200, state.log_snapshot())
        else:
            self._json(404, {"error": "unknown test endpoint"})

    # ---- hub
    def _route_hub(self, method, path):
        segs = path.lstrip("/").split("/")
        is_api = segs[0] == "api"
        is_resolve = len(segs) >= 5 and segs[2] == "resolve"
        if self._status_fault("api" if is_api else "resolve" if is_resolve else "any"):
            return
        if is_api:
            if method == "POST":
                self._error(405, "Method not allowed")
                return
            if len(segs) == 2 and segs[1] == "models":
                self._list_models()
                return
            if len(segs) >= 4 and segs[1] == "models":
                repo_id = "%s/%s" % (unquote(segs[2]), unquote(segs[3]))
                rest = segs[4:]
                if rest == [] or rest == [""]:
                    self._model_info(repo_id, "main")
                    return
                if rest[0] == "revision" and len(rest) == 2:
                    self._model_info(repo_id, unquote(rest[1]))
                    return
                if rest[0] == "tree" and len(rest) >= 2:
                    sub = "/".join(unquote(s) for s in rest[2:] if s != "")
                    self._tree(repo_id, unquote(rest[1]), sub.strip("/"))
                    return
            self._error(404, "Sorry, we can't find the page you are looking for.")
            return
        if is_resolve:
            if method not in ("GET", "HEAD"):
                self._error(405, "Method not allowed")
                return
            repo_id = "%s/%s" % (unquote(segs[0]), unquote(segs[1]))
            self._resolve(repo_id, unquote(segs[3]), "/".join(unquote(s) for s in segs[4:]))
            return
        self._error(404, "Sorry, we can't find the page you are looking for.")

    def _repo_or_404(self, repo_id):
        repo = self.server.state.repos.get(repo_id)
        if repo is None:
            self._error(404, "Repository not found", "RepoNotFound")
        return repo

    def _rev_ok(self, repo, rev):
        if rev in ("main", repo.sha):
            return True
        self._error(404, "Invalid rev id: %s" % rev, "RevisionNotFound")
        return False

    def _q(self, name, default=None):
        vals = self._query.get(name)
        return vals[-1] if vals else default

    def _q_list(self, *names):
        out = []
        for n in names:
            for v in self._query.get(n, []):
                out.extend(x for x in v.split(",") if x != "")
        return out

    def _listing_item(self, repo, extra_fields):
        item = {
            "_id": repo.object_id,
            "id": repo.id,
            "likes": repo.likes,
            "trendingScore": 0,
            "private": False,
            "gated": repo.gated_value,
            "downloads": repo.downloads,
            "tags": list(repo.tags),
            "pipeline_tag": "text-generation",
            "library_name": "gguf",
            "createdAt": FIXED_DATE,
            "modelId": repo.id,
        }
        if extra_fields:
            item.update({"author": repo.org, "sha": repo.sha, "lastModified": FIXED_DATE,
                         "disabled": False})
            if "siblings" in extra_fields:
                item["siblings"] = [{"rfilename": p} for p in sorted(repo.files)]
            if "gguf" in extra_fields and repo.gguf_info() is not None:
                item["gguf"] = repo.gguf_info()
        return item

    def _list_models(self):
        state = self.server.state
        search = (self._q("search") or "").lower()
        author = (self._q("author") or "").lower()
        filters = [f.lower() for f in self._q_list("filter")]
        gated = self._q("gated")
        expand = set(self._q_list("expand", "expand[]"))
        full = (self._q("full") or "").lower() in ("1", "true")
        extra = set()
        if full:
            extra |= {"siblings", "sha"}
        extra |= expand & {"siblings", "sha", "lastModified", "author", "disabled", "gguf"}
        with state.lock:
            repos = list(state.repos.values())
        out = []
        for repo in repos:
            if search and search not in repo.id.lower():
                continue
            if author and repo.org.lower() != author:
                continue
            tags = [t.lower() for t in repo.tags]
            if any(f not in tags for f in filters):
                continue
            if "gguf" in filters and not repo.has_gguf():
                continue
            if gated is not None and (gated.lower() in ("1", "true")) != repo.gated:
                continue
            out.append(repo)
        sort = self._q("sort") or "downloads"
        keys = {"downloads": lambda r: r.downloads, "likes": lambda r: r.likes,
                "trendingScore": lambda r: 0, "createdAt": lambda r: 0, "lastModified": lambda r: 0,
                "id": lambda r: r.id.lower(), "modelId": lambda r: r.id.lower()}
        key = keys.get(sort, keys["downloads"])
        desc = (self._q("direction") or "-1") == "-1"
        out.sort(key=lambda r: r.id)  # stable tie-break
        out.sort(key=key, reverse=desc)
        try:
            limit = int(self._q("limit") or 0)
        except ValueError:
            limit = 0
        if limit > 0:
            out = out[:limit]
        self._json(200, [self._listing_item(r, extra) for r in out])

    def _model_info(self, repo_id, rev):
        repo = self._repo_or_404(repo_id)
        if repo is None or not self._rev_ok(repo, rev):
            return
        blobs = (self._q("blobs") or "").lower() in ("1", "true")
        with self.server.state.lock:
            files = sorted(repo.files.items())
        siblings = []
        for p, f in files:
            s = {"rfilename": p}
            if blobs:
                ann = self.server.state.announced_sha256(repo, f)
                s["size"] = f.size
                if f.lfs:
                    s["blobId"] = f.pointer_oid(ann)
                    s["lfs"] = {"sha256": ann, "size": f.size, "pointerSize": len(f.pointer(ann))}
                else:
                    s["blobId"] = f.git_sha1
            siblings.append(s)
        info = {
            "_id": repo.object_id,
            "id": repo.id,
            "modelId": repo.id,
            "author": repo.org,
            "sha": repo.sha,
            "lastModified": FIXED_DATE,
            "createdAt": FIXED_DATE,
            "private": False,
            "disabled": False,
            "gated": repo.gated_value,
            "downloads": repo.downloads,
            "likes": repo.likes,
            "trendingScore": 0,
            "tags": list(repo.tags),
            "pipeline_tag": "text-generation",
            "library_name": "gguf",
            "siblings": siblings,
            "spaces": [],
            "usedStorage": sum(f.size for _, f in files),
        }
        gguf = repo.gguf_info()
        if gguf is not None:
            info["gguf"] = gguf
        self._json(200, info)

    def _tree(self, repo_id, rev, sub):
        state = self.server.state
        repo = self._repo_or_404(repo_id)
        if repo is None or not self._rev_ok(repo, rev) or not self._check_gated(repo):
            return
        recursive = (self._q("recursive") or "").lower() in ("1", "true")
        with state.lock:
            files = dict(repo.files)
        dirs = repo.dirs()
        if sub and sub not in dirs:
            self._error(404, "Entry not found: %s does not exist on \"%s\"" % (sub, rev), "EntryNotFound",
                        [("X-Repo-Commit", repo.sha)])
            return
        prefix = sub + "/" if sub else ""

        def wanted(p):
            if not p.startswith(prefix):
                return False
            return recursive or "/" not in p[len(prefix):]

        entries = []
        for d in sorted(dirs):
            if wanted(d):
                entries.append({"type": "directory",
                                "oid": hashlib.sha1(("tree:%s:%s" % (repo.id, d)).encode()).hexdigest(),
                                "size": 0, "path": d})
        for p, f in sorted(files.items()):
            if not wanted(p):
                continue
            if f.lfs:
                ann = state.announced_sha256(repo, f)
                entries.append({"type": "file", "oid": f.pointer_oid(ann), "size": f.size, "path": p,
                                "lfs": {"oid": ann, "size": f.size, "pointerSize": len(f.pointer(ann))}})
            else:
                entries.append({"type": "file", "oid": f.git_sha1, "size": f.size, "path": p})
        entries.sort(key=lambda e: e["path"])
        self._json(200, entries)

    def _resolve(self, repo_id, rev, path):
        state = self.server.state
        repo = self._repo_or_404(repo_id)
        if repo is None or not self._rev_ok(repo, rev):
            return
        commit = [("X-Repo-Commit", repo.sha)]
        if not self._check_gated(repo, commit):
            return
        with state.lock:
            f = repo.files.get(path)
        if f is None:
            self._error(404, "Entry not found", "EntryNotFound", commit)
            return
        if f.lfs:
            ann = state.announced_sha256(repo, f)
            linked = commit + [("X-Linked-Etag", '"%s"' % ann), ("X-Linked-Size", str(f.size))]
            if not state.flag("no_redirect"):
                location = "%s/cdn/%s?repo=%s&file=%s" % (state.cdn_base, ann, quote(repo.id, safe="/"),
                                                           quote(path, safe=""))
                self._send(302, b"", linked + [("ETag", '"%s"' % ann), ("Location", location),
                                               ("Content-Type", "text/plain; charset=utf-8")])
                return
            self._serve_file(f, ann, linked, cdn_role=True)
            return
        self._serve_file(f, f.git_sha1, commit, cdn_role=False)

    # ---- cdn
    def _route_cdn(self, method, path):
        if self._status_fault("cdn"):
            return
        if method not in ("GET", "HEAD"):
            self._send(405, b"Method not allowed\n", content_type="text/plain")
            return
        m = re.fullmatch(r"/cdn/([0-9a-fA-F]{64})(?:/.*)?", path)
        if not m:
            self._send(404, b"NoSuchKey\n", content_type="text/plain")
            return
        sha = m.group(1).lower()
        repo, f = self.server.state.find_for_cdn(sha, self._q("repo"), self._q("file"))
        if f is None:
            self._send(404, b"NoSuchKey\n", content_type="text/plain")
            return
        if method == "GET" and self._q("hop") is None and self.server.state.take("cdn_redirect"):
            target = self.path + ("&" if "?" in self.path else "?") + "hop=2"
            self._send(302, b"", headers=[("Location", target)])
            return
        ann = self.server.state.announced_sha256(repo, f)
        name = f.path.rsplit("/", 1)[-1]
        disp = "inline; filename*=UTF-8''%s; filename=\"%s\";" % (quote(name), name.replace('"', ""))
        self._serve_file(f, ann, [("Content-Disposition", disp)], cdn_role=True)

    # ---- file bodies (CDN, or /resolve for small files and under no_redirect)
    def _serve_file(self, f, etag, extra, cdn_role):
        state = self.server.state
        total = f.size
        status, start, end = 200, 0, total - 1
        rng = self.headers.get("Range")
        if_range = self.headers.get("If-Range")
        ignore = cdn_role and state.flag("ignore_range")
        if rng is not None and not ignore and (if_range is None or _norm_etag(if_range) == etag):
            m = re.fullmatch(r"\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*", rng)
            if m and (m.group(1) or m.group(2)):
                a, b = m.group(1), m.group(2)
                unsatisfiable = False
                if a == "":
                    n = int(b)
                    if n == 0:
                        unsatisfiable = True
                    else:
                        status, start, end = 206, max(0, total - n), total - 1
                        unsatisfiable = total == 0
                else:
                    s = int(a)
                    e = int(b) if b else total - 1
                    if b and e < s:
                        pass  # syntactically invalid: ignore the Range header
                    elif s >= total:
                        unsatisfiable = True
                    else:
                        status, start, end = 206, s, min(e, total - 1)
                if unsatisfiable:
                    self._send(416, b"", [("Content-Range", "bytes */%d" % total), ("Accept-Ranges", "bytes"),
                                          ("ETag", '"%s"' % etag)] + list(extra))
                    return
        length = max(0, end - start + 1)
        headers = [("Content-Type", "application/octet-stream"), ("Accept-Ranges", "bytes"),
                   ("ETag", '"%s"' % etag)] + list(extra)
        if status == 206:
            headers.append(("Content-Range", "bytes %d-%d/%d" % (start, end, total)))
        self._headers_out(status, headers, length)
        if self._method == "HEAD":
            return
        drop = state.take("drop_after") if cdn_role else None
        rate = state.flag("rate") if cdn_role else None
        self._stream(f, start, length, None if drop is None else drop["bytes"], rate)

    def _client_gone(self):
        try:
            r, _, _ = select.select([self.connection], [], [], 0)
            if not r:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _stream(self, f, start, length, drop_after, rate):
        limit = length if drop_after is None else min(length, drop_after)
        chunk_size = CHUNK if not rate else int(max(1, min(CHUNK, rate / 20)))
        t0 = time.monotonic()
        sent = 0
        for chunk in f.iter_range(start, limit, chunk_size):
            if rate:
                due = t0 + (sent + len(chunk)) / rate
                while True:
                    now = time.monotonic()
                    if now >= due:
                        break
                    if self._client_gone():
                        raise _ClientGone()
                    time.sleep(min(0.02, due - now))
                if self._client_gone():
                    raise _ClientGone()
            self.wfile.write(chunk)
            sent += len(chunk)
            self._entry["bytes_sent"] = sent
        if drop_after is not None:
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                self.connection.close()
            except OSError:
                pass
            raise _Dropped()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, addr, role, state):
        self.role = role
        self.state = state
        super().__init__(addr, Handler)

    def server_bind(self):
        # HTTPServer.server_bind calls socket.getfqdn(), which can stall on a box without DNS.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = host
        self.server_port = port

    def handle_error(self, request, client_address):
        if VERBOSE:
            super().handle_error(request, client_address)


def main(argv=None):
    global VERBOSE
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repos", required=True, help="folder holding <org>/<name>/<files>")
    ap.add_argument("--port", type=int, default=0, help="hub port on 127.0.0.1 (0: any free port)")
    ap.add_argument("--cdn-port", type=int, default=0, help="CDN port on 127.0.0.1, named localhost (0: any)")
    ap.add_argument("--verbose", action="store_true", help="log requests to stderr")
    ap.add_argument("--ignore-stdin", action="store_true", help="do not stop when stdin reaches EOF")
    args = ap.parse_args(argv)
    VERBOSE = args.verbose

    state = State(args.repos)
    hub = Server(("127.0.0.1", args.port), "hub", state)
    cdn = Server(("127.0.0.1", args.cdn_port), "cdn", state)
    state.hub_base = "http://127.0.0.1:%d" % hub.server_address[1]
    state.cdn_base = "http://localhost:%d" % cdn.server_address[1]
    for srv in (hub, cdn):
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()

    stop = threading.Event()

    def on_signal(signum, frame):
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    if not args.ignore_stdin:
        def watch_stdin():
            try:
                while sys.stdin.buffer.read1(65536):
                    pass
            except (OSError, ValueError):
                pass
            stop.set()
        threading.Thread(target=watch_stdin, daemon=True).start()

    sys.stdout.write(json.dumps({"hub": state.hub_base, "cdn": state.cdn_base}) + "\n")
    sys.stdout.flush()
    log_err("serving %d repos" % len(state.repos))

    while not stop.wait(0.5):
        pass
    for srv in (hub, cdn):
        srv.shutdown()
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
