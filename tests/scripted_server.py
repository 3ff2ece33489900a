"""A local OpenAI-compatible HTTP server (127.0.0.1, no network) that answers
/v1/chat/completions with scripted responses, for driving litellm's real client in tests."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Union

# A script step: a dict (assistant message fields), an int (HTTP error status), or a callable
# taking the request body and returning one of those.
Step = Union[dict, int, Callable[[dict], Union[dict, int]]]


def tool_call(name: str, arguments: dict | str, call_id: str = "call_1") -> dict:
    """An assistant message with one tool call (arguments given as a dict or raw text)."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"content": None, "tool_calls": [{"id": call_id, "type": "function",
                                             "function": {"name": name, "arguments": args}}]}


class ScriptedServer:
    """Serves `script` in order (the last step repeats); records every request body."""

    def __init__(self, script: list[Step]):
        self.script = list(script)
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                server.requests.append(body)
                step = server.script[min(len(server.requests) - 1, len(server.script) - 1)]
                if callable(step):
                    step = step(body)
                if isinstance(step, int):
                    payload = json.dumps({"error": {"message": f"scripted {step}", "type": "server_error"}}).encode()
                    self.send_response(step)
                else:
                    message = {"role": "assistant", "content": step.get("content")}
                    if step.get("tool_calls"):
                        message["tool_calls"] = step["tool_calls"]
                    payload = json.dumps({
                        "id": f"chatcmpl-{len(server.requests)}", "object": "chat.completion", "created": 0,
                        "model": body.get("model", "scripted"),
                        "choices": [{"index": 0, "message": message,
                                     "finish_reason": "tool_calls" if step.get("tool_calls") else "stop"}],
                        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "ScriptedServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
