"""A local server that speaks the Hugging Face Hub's protocol, for `ridge pull` and `hf://` names.

    GET       /api/models/ORG/REPO/revision/REV[?blobs=true]  -> {"sha", "siblings": [{"rfilename", "blobId",
                                                                  "size", "lfs": {"sha256", "size", "pointerSize"}}]}
    GET|HEAD  /ORG/REPO/resolve/REV/PATH  -> a git file: 200 with ETag (its git blob id) and X-Repo-Commit;
                                              an LFS file: 302 to the storage server with X-Linked-Etag (its
                                              SHA-256), X-Linked-Size and X-Repo-Commit, as the Hub answers
    GET|HEAD  <storage>/lfs/SHA256         -> the bytes, with Range requests (206 + Content-Range)

Errors carry the Hub's X-Error-Code (RepoNotFound, RevisionNotFound, EntryNotFound); a private repository
answers 401 without its token. Files are served from disk in slices (real model files, never copied), with
byte patches for variants. Faults for the tests: cut the connection once after N bytes of a blob, or serve
one wrong byte. Every request is logged (server, method, path, Range, Authorization)."""
import hashlib
import http.server
import json
import os
import ssl
import threading
import urllib.parse

LFS_EXTENSIONS = (".gguf", ".safetensors", ".bin", ".onnx", ".model")


class HubFile:
    """One file of a repository: bytes from `source` (a path) or `data`, with {offset: bytes} patches."""

    def __init__(self, source=None, data=None, patches=None):
        self.source, self.data, self.patches = source, data, dict(patches or {})
        self.size = os.path.getsize(source) if source else len(data)

    def read(self, offset, n):
        if self.source:
            with open(self.source, "rb") as f:
                f.seek(offset)
                chunk = bytearray(f.read(n))
        else:
            chunk = bytearray(self.data[offset:offset + n])
        for at, patch in self.patches.items():
            for i, b in enumerate(patch):
                if offset <= at + i < offset + len(chunk):
                    chunk[at + i - offset] = b
        return bytes(chunk)

    def digests(self, lfs):
        """(sha256, git blob id): an LFS file's blob id is its pointer file's, as in git."""
        sha, git = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % self.size)
        for offset in range(0, self.size, 8 << 20):
            chunk = self.read(offset, 8 << 20)
            sha.update(chunk)
            if not lfs:
                git.update(chunk)
        if lfs:
            pointer = (f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha.hexdigest()}\n"
                       f"size {self.size}\n").encode()
            git = hashlib.sha1(b"blob %d\0" % len(pointer) + pointer)
            self.pointer_size = len(pointer)
        return sha.hexdigest(), git.hexdigest()


class Repo:
    def __init__(self, repo_id, files, token=None):
        self.repo_id, self.token = repo_id, token
        self.files = dict(sorted(files.items()))
        self.meta = {}
        for path, f in self.files.items():
            lfs = path.endswith(LFS_EXTENSIONS)
            sha, blob = f.digests(lfs)
            self.meta[path] = {"sha256": sha if lfs else None, "blob": blob, "size": f.size,
                               "pointer": getattr(f, "pointer_size", None)}
        self.commit = hashlib.sha1(json.dumps(sorted((p, m["blob"]) for p, m in self.meta.items())).encode()).hexdigest()
        self.refs = {"main": self.commit}


class FakeHub:
    def __init__(self, tls=None):
        """`tls`: (certificate file, key file) to serve HTTPS on both servers."""
        self.scheme = "https" if tls else "http"
        self.repos = {}
        self.blobs = {}  # sha256 -> HubFile
        self.log = []
        self.cut_once = {}  # sha256 -> bytes sent before the connection drops (once)
        self.corrupt = set()  # sha256 of blobs served with one wrong byte
        self.lock = threading.Lock()
        self.hub = self._server("hub", tls)
        self.storage = self._server("storage", tls)

    @property
    def url(self):
        return f"{self.scheme}://127.0.0.1:{self.hub.server_address[1]}"

    @property
    def storage_url(self):
        return f"{self.scheme}://127.0.0.1:{self.storage.server_address[1]}"

    def add_repo(self, repo_id, files, token=None):
        repo = Repo(repo_id, files, token)
        self.repos[repo_id] = repo
        for path, m in repo.meta.items():
            if m["sha256"]:
                self.blobs[m["sha256"]] = repo.files[path]
        return repo

    def requests(self, server=None, method=None, path_part=""):
        with self.lock:
            return [r for r in self.log if (server is None or r["server"] == server)
                    and (method is None or r["method"] == method) and path_part in r["path"]]

    def start(self):
        for s in (self.hub, self.storage):
            threading.Thread(target=s.serve_forever, daemon=True).start()
        return self

    def stop(self):
        for s in (self.hub, self.storage):
            s.shutdown()
            s.server_close()

    def _server(self, name, tls):
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_HEAD(self):
                self._route(head=True)

            def do_GET(self):
                self._route(head=False)

            def _route(self, head):
                with hub.lock:
                    hub.log.append({"server": name, "method": self.command, "path": self.path,
                                    "range": self.headers.get("Range"), "auth": self.headers.get("Authorization")})
                path = urllib.parse.urlsplit(self.path).path
                if name == "storage":
                    return self._blob(path.removeprefix("/lfs/"), head)
                if path.startswith("/api/models/"):
                    return self._api(path.removeprefix("/api/models/"))
                parts = path.lstrip("/").split("/", 4)
                if len(parts) == 5 and parts[2] == "resolve":
                    return self._resolve("/".join(parts[:2]), urllib.parse.unquote(parts[3]),
                                         urllib.parse.unquote(parts[4]), head)
                self._reply(404, b"", {"X-Error-Code": "EntryNotFound"})

            def _reply(self, status, body, headers=None, length=None):
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body) if length is None else length))
                self.end_headers()
                if self.command != "HEAD" and body:
                    self.wfile.write(body)

            def _repo(self, repo_id, revision):
                """(repo, commit) or None after answering the error the Hub gives."""
                repo = hub.repos.get(repo_id)
                if repo is None:
                    self._reply(404, b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"})
                    return None
                if repo.token and self.headers.get("Authorization") != f"Bearer {repo.token}":
                    self._reply(401, b'{"error": "Invalid credentials"}')
                    return None
                commit = revision if revision == repo.commit else repo.refs.get(revision)
                if commit is None:
                    self._reply(404, b'{"error": "Invalid rev id"}', {"X-Error-Code": "RevisionNotFound"})
                    return None
                return repo, commit

            def _api(self, rest):
                repo_id, _, revision = rest.partition("/revision/")
                found = self._repo(repo_id, urllib.parse.unquote(revision or "main"))
                if not found:
                    return
                repo, commit = found
                siblings = []
                for path, m in repo.meta.items():
                    s = {"rfilename": path, "blobId": m["blob"], "size": m["pointer"] or m["size"]}
                    if m["sha256"]:
                        s["lfs"] = {"sha256": m["sha256"], "size": m["size"], "pointerSize": m["pointer"]}
                    siblings.append(s)
                body = json.dumps({"id": repo_id, "modelId": repo_id, "sha": commit, "siblings": siblings}).encode()
                self._reply(200, body, {"Content-Type": "application/json"})

            def _resolve(self, repo_id, revision, file, head):
                found = self._repo(repo_id, revision)
                if not found:
                    return
                repo, commit = found
                m = repo.meta.get(file)
                if m is None:
                    return self._reply(404, b"", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit})
                if m["sha256"]:
                    return self._reply(302, b"", {"Location": f"{hub.storage_url}/lfs/{m['sha256']}",
                                                  "X-Repo-Commit": commit, "X-Linked-Etag": f'"{m["sha256"]}"',
                                                  "X-Linked-Size": str(m["size"]), "ETag": f'"{m["blob"]}"'})
                data = repo.files[file].read(0, m["size"])
                self._reply(200, data, {"X-Repo-Commit": commit, "ETag": f'"{m["blob"]}"'})

            def _blob(self, sha, head):
                f = hub.blobs.get(sha)
                if f is None:
                    return self._reply(404, b"")
                start, status, headers = 0, 200, {"Accept-Ranges": "bytes", "ETag": f'"{sha}"'}
                rng = self.headers.get("Range", "")
                if rng.startswith("bytes=") and rng.endswith("-"):
                    start = int(rng[6:-1])
                    if start >= f.size:
                        return self._reply(416, b"", {"Content-Range": f"bytes */{f.size}"})
                    status = 206
                    headers["Content-Range"] = f"bytes {start}-{f.size - 1}/{f.size}"
                self._reply(status, b"", headers, length=f.size - start)
                if head:
                    return
                with hub.lock:
                    cut = hub.cut_once.pop(sha, None)
                    corrupt = sha in hub.corrupt
                offset = start
                while offset < f.size:
                    chunk = f.read(offset, 1 << 20)
                    if corrupt and offset <= f.size // 2 < offset + len(chunk):
                        i = f.size // 2 - offset
                        chunk = chunk[:i] + bytes([chunk[i] ^ 0x5A]) + chunk[i + 1:]
                    if cut is not None and offset + len(chunk) > cut:
                        self.wfile.write(chunk[:cut - offset])
                        self.wfile.flush()
                        self.close_connection = True
                        return  # the client sees fewer bytes than Content-Length said
                    self.wfile.write(chunk)
                    offset += len(chunk)

        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        if tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            server.socket = context.wrap_socket(server.socket, server_side=True)
        return server
