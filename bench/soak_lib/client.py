"""The soak's HTTP plumbing: plain and streamed requests (TTFT, inter-token gaps, choices), raw sockets for
the clients that vanish or read slowly, error bodies and transport failures written into a request's record."""
import http.client
import json
import socket

from .common import now


def error_of(status, body):
    """{'status', 'type', 'code', 'message'} from an error body (OpenAI's {"error": {...}} or anything)."""
    err = {"status": status, "type": None, "code": None, "message": None}
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
    try:
        obj = json.loads(text)
        e = obj.get("error", obj) if isinstance(obj, dict) else {}
        if isinstance(e, dict):
            err.update(type=e.get("type"), code=e.get("code"), message=e.get("message"))
        else:
            err["message"] = str(e)
    except ValueError:
        err["message"] = text[:300]
    if err["message"] is not None:
        err["message"] = str(err["message"])[:300]
    return err


def dechunk(data):
    out, i = bytearray(), 0
    while i < len(data):
        j = data.find(b"\r\n", i)
        if j < 0:
            break
        try:
            size = int(data[i:j].split(b";")[0], 16)
        except ValueError:
            break
        if size == 0:
            break
        out += data[j + 2:j + 2 + size]
        i = j + 2 + size + 2
    return bytes(out)


class Client:
    """Requests to the server (a part of workload.Soak: self.host, self.port, self.args)."""

    def connect(self, timeout=None):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout or self.args.request_timeout)

    def fail_transport(self, rec, e):
        rec["outcome"] = "timeout" if isinstance(e, (socket.timeout, TimeoutError)) else "transport_error"
        rec["error_message"] = f"{type(e).__name__}: {e}"

    def set_http_error(self, rec, status, body):
        err = error_of(status, body)
        rec.update(status=status, outcome="http_error", error_type=err["type"], error_code=err["code"],
                   error_message=err["message"])

    def exchange(self, rec, path, body, read):
        """POSTs `body` as JSON on a connection of its own and returns read(response); a transport failure or a
        timeout (while sending or reading) is written into rec and gives None. The connection is closed after."""
        conn = self.connect()
        try:
            conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
            return read(conn.getresponse())
        except (OSError, http.client.HTTPException) as e:
            self.fail_transport(rec, e)
            return None
        finally:
            conn.close()

    def post_json(self, rec, path, body, t_send):
        """Plain (non-stream) request; returns the parsed 2xx body or None (rec filled with the failure)."""
        def read(resp):
            data = resp.read()
            rec["status"] = resp.status
            rec["latency"] = round(now() - t_send, 4)
            if not 200 <= resp.status < 300:
                self.set_http_error(rec, resp.status, data)
                return None
            try:
                return json.loads(data)
            except ValueError:
                rec.update(outcome="stream_error", error_message="2xx body is not JSON: " + data[:120].decode("utf-8", "replace"))
                return None
        return self.exchange(rec, path, body, read)

    def stream(self, rec, path, body, t_send, stop_after=None):
        """A stream read line by line: TTFT (first chunk with content), inter-token gaps, chunks, choices.
        stop_after: close the connection after that many content chunks (a cancellation). Returns the
        content chunks' objects, or None on failure."""
        return self.exchange(rec, path, body, lambda resp: self.read_stream(rec, resp, t_send, stop_after))

    def read_stream(self, rec, resp, t_send, stop_after):
        """stream()'s reading of the answer: the status, then the SSE events, timed as they come."""
        itl, chunks, objs = [], 0, []
        last = None
        indices = set()
        rec["status"] = resp.status
        if not 200 <= resp.status < 300:
            self.set_http_error(rec, resp.status, resp.read())
            rec["latency"] = round(now() - t_send, 4)
            return None
        done = False
        for raw in resp:
            line = raw.strip()
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                done = True
                break
            t = now()
            try:
                obj = json.loads(payload)
            except ValueError:
                rec.update(outcome="stream_error", error_message="SSE data is not JSON: " + payload[:120].decode("utf-8", "replace"))
                return None
            if "error" in obj:
                err = error_of(resp.status, payload)
                rec.update(outcome="stream_error", error_type=err["type"], error_code=err["code"],
                           error_message=err["message"])
                return None
            objs.append(obj)
            has = False
            for c in obj.get("choices") or []:
                indices.add(c.get("index", 0))
                d = c.get("delta") or {}
                if c.get("text") or d.get("content") or d.get("tool_calls") or d.get("reasoning_content"):
                    has = True
            if has:
                chunks += 1
                if last is None:
                    rec["ttft"] = round(t - t_send, 5)
                else:
                    itl.append(t - last)
                last = t
                if stop_after is not None and chunks >= stop_after:
                    rec["outcome"] = "cancelled"
                    break
        rec["latency"] = round(now() - t_send, 4)
        rec["chunks"] = chunks
        rec["choices_seen"] = len(indices)
        rec["_itl"] = itl
        if itl:
            rec["itl_mean"] = round(sum(itl) / len(itl), 5)
            rec["itl_max"] = round(max(itl), 5)
        if rec["outcome"] == "cancelled":
            return objs
        if not done:
            rec.update(outcome="stream_error", error_message=f"stream ended without [DONE] after {chunks} chunks")
            return None
        return objs

    def raw_request(self, path, body, rcvbuf=None):
        """A socket with the HTTP request written to it (Connection: close)."""
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        s.settimeout(self.args.request_timeout)
        s.connect((self.host, self.port))
        data = json.dumps(body).encode()
        head = (f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n").encode()
        s.sendall(head + data)
        return s
