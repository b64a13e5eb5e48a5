#!/usr/bin/env python3
"""llamadesk-server through real clients on real loopback sockets: OpenAI's own Python client,
raw HTTP for the framing, the status codes and the faults, and 16 clients at once.

Run by CTest (tests/server/CMakeLists.txt) as
    PYTHON test_openai_server.py --server PATH/llamadesk-server --model PATH.gguf --bench PATH/llamadesk-bench
Exits 77 (CTest: skipped) when this python lacks the `openai` package, which
installer/test-server-python.sh installs into the tests' virtual environment.
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import socket
import subprocess
import tempfile
import sys
import threading
import time
import unittest
import urllib.request

try:
    import openai
except ImportError:
    print("SKIP: this python has no 'openai' package (installer/test-server-python.sh installs it)")
    sys.exit(77)

ARGS = None
BLOCK = 16  # tokens per KV block (LoadParams::block_size)


class Server:
    """A llamadesk-server on a free port, ready once /health says ok."""

    def __init__(self, *extra):
        model = [] if "--model" in extra else ["--model", ARGS.model]
        cmd = [ARGS.server, *model, "--port", "0", *extra]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise RuntimeError(f"{cmd} said {line!r}; stderr: {self.proc.stderr.read()}")
        self.base = line.split()[-1]               # http://127.0.0.1:PORT/v1
        self.port = int(re.search(r":(\d+)/v1$", self.base).group(1))
        deadline = time.time() + 60
        while self.health()[0] != 200:
            if time.time() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the server never became healthy: " + self.proc.stderr.read())
            time.sleep(0.1)

    def health(self):
        return request(self.port, "GET", "/health")[:2]

    def metrics(self):
        _, body, _ = request(self.port, "GET", "/metrics", headers=self.auth())
        values = {}
        for line in body.decode().splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                values[name] = float(value)
        return values

    def auth(self):
        return {}

    def client(self, key="none"):
        return openai.OpenAI(base_url=self.base, api_key=key, max_retries=0, timeout=120)

    def close(self):
        self.proc.terminate()
        try:
            self.assertion_free_wait()
        finally:
            self.proc.stdout.close()
            self.proc.stderr.close()

    def assertion_free_wait(self):
        try:
            code = self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise RuntimeError("llamadesk-server did not stop within 20 s of SIGTERM")
        if code != 0:
            raise RuntimeError(f"llamadesk-server ended with {code}: {self.proc.stderr.read()}")


_random_model = None


def random_model():
    """A synthetic 110M of random weights in Q4_0 (written once by llamadesk-bench): it ends an answer
    only at its context's end, 1024 tokens on, so an answer outlasts whatever the test does meanwhile."""
    global _random_model
    if _random_model is None:
        path = os.path.join(tempfile.mkdtemp(), "random-110m.gguf")
        subprocess.run([ARGS.bench, "--synthetic", "110M", "--dtype", "q4_0", "--write-gguf", path],
                       check=True, capture_output=True)
        _random_model = path
    return _random_model


def request(port, method, path, body=None, headers=None, timeout=120):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    hdrs = {"Content-Type": "application/json", **(headers or {})}
    conn.request(method, path, body=data, headers=hdrs)
    resp = conn.getresponse()
    payload = resp.read()
    conn.close()
    return resp.status, payload, dict(resp.getheaders())


def raw_exchange(port, data, timeout=30):
    """Sends bytes as they are and returns the status line's code (0 if the server closed first)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        reply = b""
        try:
            while b"\r\n" not in reply:
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
        except ConnectionResetError:
            pass
    m = re.match(rb"HTTP/1\.[01] (\d+)", reply)
    return int(m.group(1)) if m else 0


def chat(question, max_tokens=24, system="You are LlamaDesk Guide."):
    return dict(model="x", temperature=0, max_tokens=max_tokens,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": question}])


QUESTIONS = [
    "What is LlamaDesk?", "How do I start a new conversation?", "What is the KV cache?",
    "How do I load another model?", "What does the inspector show?", "Which formats can it open?",
    "How do I export a conversation?", "What are tokens per second?", "How do I change the theme?",
    "Can I use a GPU?", "What is a context shift?", "How do I search conversations?",
    "What is the built-in model?", "How do I stop an answer?", "What is a system prompt?",
    "How do I import conversations?",
]


class OpenAIClient(unittest.TestCase):
    """The official client: chat streamed and not, completions, models, usage, its error types."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--parallel", "4")
        cls.client = cls.server.client()

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_models(self):
        models = self.client.models.list()
        self.assertEqual(len(models.data), 1)
        self.assertTrue(models.data[0].id)

    def test_chat_streamed_equals_not_streamed(self):
        answer = self.client.chat.completions.create(**chat(QUESTIONS[0]))
        text = answer.choices[0].message.content
        self.assertTrue(text)
        self.assertIn(answer.choices[0].finish_reason, ("stop", "length"))
        self.assertGreater(answer.usage.prompt_tokens, 0)
        self.assertGreater(answer.usage.completion_tokens, 0)
        self.assertEqual(answer.usage.total_tokens, answer.usage.prompt_tokens + answer.usage.completion_tokens)
        pieces, usage, finish = [], None, None
        for chunk in self.client.chat.completions.create(**chat(QUESTIONS[0]), stream=True,
                                                          stream_options={"include_usage": True}):
            if chunk.usage:
                usage = chunk.usage
            for choice in chunk.choices:
                pieces.append(choice.delta.content or "")
                finish = choice.finish_reason or finish
        self.assertEqual("".join(pieces), text)
        self.assertEqual(finish, answer.choices[0].finish_reason)
        self.assertEqual(usage.completion_tokens, answer.usage.completion_tokens)
        self.assertEqual(usage.prompt_tokens, answer.usage.prompt_tokens)

    def test_completion(self):
        answer = self.client.completions.create(model="x", prompt="The KV cache", max_tokens=12, temperature=0)
        self.assertTrue(answer.choices[0].text)
        if answer.choices[0].finish_reason == "length":
            self.assertEqual(answer.usage.completion_tokens, 12)
        else:
            self.assertLess(answer.usage.completion_tokens, 12)
        streamed = "".join(c.choices[0].text for c in self.client.completions.create(
            model="x", prompt="The KV cache", max_tokens=12, temperature=0, stream=True) if c.choices)
        self.assertEqual(streamed, answer.choices[0].text)

    def test_follow_up_comes_out_of_the_cache(self):
        first_request = chat("Tell me about branches.", max_tokens=20)
        first = self.client.chat.completions.create(**first_request)
        before = self.server.metrics()
        follow = dict(first_request)
        follow["messages"] = first_request["messages"] + [
            {"role": "assistant", "content": first.choices[0].message.content},
            {"role": "user", "content": "And presets?"}]
        second = self.client.chat.completions.create(**follow)
        cached = second.usage.prompt_tokens_details.cached_tokens
        # At least the first prompt's full blocks; here the whole first exchange, which the
        # server kept as a conversation and continued.
        self.assertGreaterEqual(cached, first.usage.prompt_tokens // BLOCK * BLOCK)
        self.assertGreaterEqual(cached, first.usage.prompt_tokens + first.usage.completion_tokens - 1)
        self.assertLess(cached, second.usage.prompt_tokens)
        after = self.server.metrics()
        # What /metrics counts as served from the cache is what usage reported.
        self.assertEqual(after["llamadesk_prefix_cache_tokens_total"] - before["llamadesk_prefix_cache_tokens_total"],
                         cached)
        # A first request shares nothing but what another already computed: a new question
        # with the same system prompt takes at most that prompt's full blocks.
        fresh = self.client.chat.completions.create(**chat("A question never asked before, about zoom."))
        self.assertLess(fresh.usage.prompt_tokens_details.cached_tokens, fresh.usage.prompt_tokens)

    def test_errors_are_the_clients_own_types(self):
        with self.assertRaises(openai.BadRequestError) as bad:
            self.client.chat.completions.create(model="x", messages=[])
        self.assertIn("messages", str(bad.exception))
        with self.assertRaises(openai.BadRequestError) as bad:
            self.client.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}],
                                                temperature=-1)
        with self.assertRaises(openai.BadRequestError) as long:
            self.client.chat.completions.create(model="x", messages=[{"role": "user", "content": "word " * 40000}])
        self.assertEqual(long.exception.code, "context_length_exceeded")
        self.assertRegex(long.exception.message, r"\d+ tokens")
        with self.assertRaises(openai.NotFoundError):
            self.client.embeddings.create(model="x", input="hi")


class Keys(unittest.TestCase):
    def test_key_required_and_compared(self):
        server = Server("--api-key", "s3cret")
        try:
            with self.assertRaises(openai.AuthenticationError):
                server.client("wrong").models.list()
            status, body, headers = request(server.port, "GET", "/v1/models")  # no key at all
            self.assertEqual(status, 401, body)
            self.assertEqual(json.loads(body)["error"]["type"], "authentication_error")
            self.assertEqual(headers.get("WWW-Authenticate"), "Bearer")
            self.assertEqual(len(server.client("s3cret").models.list().data), 1)
            self.assertEqual(server.health()[0], 200)  # health needs no key
        finally:
            server.close()

    def test_other_addresses_need_a_key(self):
        out = subprocess.run([ARGS.server, "--model", ARGS.model, "--host", "0.0.0.0", "--port", "0"],
                             capture_output=True, text=True, timeout=60)
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("API key", out.stderr)


class Busy(unittest.TestCase):
    """The one place must stay taken while the second request comes: the built-in model can end its
    answer first on a busy machine, so the answer is the random model's, 1000 tokens long."""

    def test_full_queue_is_429_with_retry_after(self):
        server = Server("--model", random_model(), "--parallel", "1", "--queue", "0")
        try:
            client = server.client()
            stream = client.chat.completions.create(**chat("Go on.", max_tokens=1000), stream=True)
            next(iter(stream))  # the one place is taken
            with self.assertRaises(openai.RateLimitError) as busy:
                client.chat.completions.create(**chat(QUESTIONS[2]))
            self.assertEqual(busy.exception.response.headers.get("retry-after"), "1")
            stream.close()
        finally:
            server.close()


class Http(unittest.TestCase):
    """Raw HTTP: SSE framing, status codes and headers, and every fault the issue names."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--parallel", "4")
        cls.port = cls.server.port

    @classmethod
    def tearDownClass(cls):
        cls.server.close()

    def test_sse_framing(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        conn.request("POST", "/v1/chat/completions", json.dumps({**chat(QUESTIONS[3]), "stream": True}),
                     {"Content-Type": "application/json"})
        resp = conn.getresponse()
        self.assertEqual(resp.status, 200)
        self.assertTrue(resp.getheader("Content-Type").startswith("text/event-stream"))
        self.assertEqual(resp.getheader("Transfer-Encoding"), "chunked")
        events = resp.read().decode().split("\n\n")
        self.assertEqual(events[-1], "")
        self.assertEqual(events[-2], "data: [DONE]")
        chunks = [json.loads(e[len("data: "):]) for e in events[:-2]]
        self.assertTrue(all(e.startswith("data: ") for e in events[:-1]))
        self.assertEqual(chunks[0]["choices"][0]["delta"]["role"], "assistant")
        self.assertTrue(all(c["object"] == "chat.completion.chunk" for c in chunks))
        self.assertEqual(len({c["id"] for c in chunks}), 1)
        self.assertIn(chunks[-1]["choices"][0]["finish_reason"], ("stop", "length"))

    def assert_error(self, status, body, code, param=None):
        self.assertEqual(status, code, body)
        error = json.loads(body)["error"]
        self.assertEqual(set(error), {"message", "type", "param", "code"})
        self.assertTrue(error["message"])
        if param:
            self.assertEqual(error["param"], param)

    def test_status_codes(self):
        status, body, _ = request(self.port, "GET", "/nothing")
        self.assert_error(status, body, 404)
        status, body, _ = request(self.port, "POST", "/v1/chat/completions", b"{\"messages\": [")
        self.assert_error(status, body, 400)
        status, body, _ = request(self.port, "POST", "/v1/chat/completions", b"not json")
        self.assert_error(status, body, 400)
        status, body, _ = request(self.port, "POST", "/v1/chat/completions",
                                  {"messages": [{"role": "user", "content": "hi"}], "temperature": "hot"})
        self.assert_error(status, body, 400, "temperature")
        status, body, _ = request(self.port, "POST", "/v1/chat/completions",
                                  {"messages": [{"role": "user", "content": "hi"}], "n": 3})
        self.assert_error(status, body, 400, "n")
        status, body, _ = request(self.port, "POST", "/v1/completions", {"prompt": 7})
        self.assert_error(status, body, 400, "prompt")
        status, _, headers = request(self.port, "GET", "/v1/models")
        self.assertEqual(status, 200)
        self.assertNotIn("Access-Control-Allow-Origin", headers)  # CORS is off by default

    def test_body_of_100_mb_is_413(self):
        head = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n" % (100 << 20))
        self.assertEqual(raw_exchange(self.port, head + b"{" * 65536), 413)
        self.assertEqual(self.server.health()[0], 200)

    def test_ten_thousand_headers_are_431(self):
        head = b"GET /v1/models HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-H%d: v\r\n" % i for i in range(10000))
        self.assertEqual(raw_exchange(self.port, head + b"\r\n"), 431)
        self.assertEqual(self.server.health()[0], 200)

    def test_a_slow_client_holds_no_slot(self):
        stop = threading.Event()

        def trickle():
            with socket.create_connection(("127.0.0.1", self.port)) as s:
                for byte in b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n":
                    if stop.is_set():
                        return
                    try:
                        s.sendall(bytes([byte]))
                    except OSError:
                        return
                    time.sleep(1.0)

        slow = [threading.Thread(target=trickle) for _ in range(8)]
        for t in slow:
            t.start()
        time.sleep(1.5)
        start = time.time()
        status, body, _ = request(self.port, "POST", "/v1/chat/completions", chat(QUESTIONS[4], max_tokens=8))
        self.assertEqual(status, 200, body)
        self.assertLess(time.time() - start, 30)
        stop.set()
        for t in slow:
            t.join()

    def test_mutated_requests_never_break_the_server(self):
        rng = random.Random(1234)
        bases = [json.dumps({**chat(q, max_tokens=1), "stream": rng.random() < 0.3}) for q in QUESTIONS[:4]]
        bases.append(json.dumps({"model": "x", "prompt": "Once", "max_tokens": 1}))
        junk = ['null', '-1', '1e999', '"x"', '[]', '{}', 'true', '0.5', '[{"role":"user"}]', '"' + "\u00e9" * 50 + '"']
        counts = {}
        for i in range(600):
            text = rng.choice(bases)
            r = rng.random()
            if r < 0.3:
                text = text[:rng.randrange(len(text))]
            elif r < 0.6:
                pos = rng.randrange(len(text))
                text = text[:pos] + chr(rng.randrange(32, 127)) + text[pos + 1:]
            else:
                keys = re.findall(r'"(\w+)":', text)
                key = rng.choice(keys)
                text = re.sub(r'"%s": ("[^"]*"|[^,}\]]+|\[[^\]]*\])' % key, '"%s": %s' % (key, rng.choice(junk)), text, 1)
            path = "/v1/completions" if '"prompt"' in text else "/v1/chat/completions"
            status, body, _ = request(self.port, "POST", path, text.encode())
            counts[status] = counts.get(status, 0) + 1
            self.assertIn(status, (200, 400), body)
            if status == 400:
                self.assertIn("error", json.loads(body))
        print(f"\n  600 mutated requests: {dict(sorted(counts.items()))}", file=sys.stderr)
        self.assertEqual(self.server.health()[0], 200)


class Disconnect(unittest.TestCase):
    """A client that leaves mid-answer stops it, and its blocks go back to the pool. The answer must
    outlast the client, so the model is the random one."""

    def test_disconnect_mid_stream_gives_the_blocks_back(self):
        server = Server("--model", random_model())
        try:
            before = server.metrics()
            s = socket.create_connection(("127.0.0.1", server.port))
            body = json.dumps({**chat("Go on.", max_tokens=1000), "stream": True}).encode()
            s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(body) + body)
            received = b""
            while received.count(b"data: ") < 3:
                received += s.recv(4096)
            s.close()
            left = time.time()
            while True:
                m = server.metrics()
                if m["llamadesk_requests_active"] == 0 and \
                        m["llamadesk_kv_blocks_used"] == before["llamadesk_kv_blocks_used"]:
                    break
                self.assertLess(time.time() - left, 10, f"blocks not given back: {m}")
                time.sleep(0.02)
            print(f"\n  client gone: answer stopped and its blocks back in {1000 * (time.time() - left):.0f} ms, "
                  f"after {m['llamadesk_completion_tokens_total']:.0f} of 1000 tokens", file=sys.stderr)
            self.assertEqual(m["llamadesk_requests_cancelled_total"] - before["llamadesk_requests_cancelled_total"], 1)
            self.assertLess(m["llamadesk_completion_tokens_total"], 300)
            self.assertEqual(server.health()[0], 200)
        finally:
            server.close()


class Concurrency(unittest.TestCase):
    def test_sixteen_clients_get_the_answers_they_get_alone(self):
        server = Server("--parallel", "16")
        try:
            client = server.client()
            alone, alone_tokens, alone_seconds = {}, 0, 0.0
            for q in QUESTIONS:
                start = time.time()
                a = client.chat.completions.create(**chat(q, max_tokens=32))
                alone_seconds += time.time() - start
                alone[q] = a.choices[0].message.content
                alone_tokens += a.usage.completion_tokens
            results, failures, tokens = {}, [], [0]
            lock = threading.Lock()

            def one_client(q):
                own = openai.OpenAI(base_url=server.base, api_key="none", max_retries=0, timeout=300)
                for _ in range(3):
                    pieces, n = [], 0
                    for chunk in own.chat.completions.create(**chat(q, max_tokens=32), stream=True,
                                                             stream_options={"include_usage": True}):
                        if chunk.usage:
                            n = chunk.usage.completion_tokens
                        for c in chunk.choices:
                            pieces.append(c.delta.content or "")
                    with lock:
                        results.setdefault(q, []).append("".join(pieces))
                        tokens[0] += n

            def guarded(q):
                try:
                    one_client(q)
                except Exception as e:  # a thread's failure fails the test below
                    failures.append(f"{q}: {e!r}")

            threads = [threading.Thread(target=guarded, args=(q,)) for q in QUESTIONS]
            start = time.time()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.time() - start
            self.assertEqual(failures, [])
            for q in QUESTIONS:
                self.assertEqual(results[q], [alone[q]] * 3, q)
            print(f"\n  16 clients x 3 streamed answers: {tokens[0]} tokens in {wall:.2f} s = "
                  f"{tokens[0] / wall:.1f} tok/s together; one client alone: "
                  f"{alone_tokens / alone_seconds:.1f} tok/s", file=sys.stderr)
        finally:
            server.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--bench", required=True, help="llamadesk-bench, which writes random-weight models")
    ARGS, rest = parser.parse_known_args()
    try:
        unittest.main(argv=[sys.argv[0], "-v", *rest])
    finally:
        if _random_model:
            shutil.rmtree(os.path.dirname(_random_model), ignore_errors=True)
