"""An echo agent on the official A2A Python SDK (a2a-sdk 1.3.0), for the
Rust client's tests (`the_python_sdks_server_answers_through_the_tool` in
tools-a2a/tests/it/client.rs, `the_python_sdks_input_required_pauses_the_run`
in tools-a2a/tests/it/approval.rs) and the round-trip bench
(tools-a2a/benches/round_trip.rs): it answers "echo: <text>" as a completed
task with one text artifact, after a working state, as SDK agents do. A
text that starts with "confirm:" is asked about first: the task waits for
input (input-required, a text message only), and the next message on it is
echoed.

    python3 tests/a2a/server.py              # prints the URL on its first line, then serves
    python3 tests/a2a/server.py --no-sleep   # the same without the 0.2 s pause (the round-trip bench)
"""

import asyncio
import socket
import sys

import uvicorn
from a2a.helpers.proto_helpers import new_task_from_user_message, new_text_artifact, new_text_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from starlette.applications import Starlette


class Echo(AgentExecutor):
    """Says back what it was told, after a short pause, so that the client
    sees a working task before the completed one when it polls (none with
    --no-sleep, as tools-a2a/benches/round_trip.rs measures it)."""

    def __init__(self, sleep: float) -> None:
        self.sleep = sleep

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        new = context.current_task is None
        if new:
            task = new_task_from_user_message(context.message)
            task.id, task.context_id = context.task_id, context.context_id
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        if self.sleep:
            await asyncio.sleep(self.sleep)
        text = context.get_user_input()
        if new and text.startswith("confirm:"):
            # Asks first, in text only, as SDK agents do: the next message
            # on the task is the answer, echoed.
            question = f"Echo {text[len('confirm:'):].strip()!r}? Answer approve or deny."
            await updater.requires_input(new_text_message(question, context_id=context.context_id, task_id=context.task_id))
            return
        await updater.add_artifact(new_text_artifact("answer", f"echo: {text}").parts, name="answer")
        await updater.complete(new_text_message(f"echo: {text}", context_id=context.context_id, task_id=context.task_id))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def main() -> None:
    sock = socket.socket()
    # Accepted connections inherit it: a response's headers and body, two
    # writes, go out at once, not 40 ms apart on a kept-alive connection
    # (Nagle's algorithm against the client's delayed ACK).
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    card = AgentCard(
        name="echo",
        description="Says back what it is told.",
        version="1.0.0",
        supported_interfaces=[AgentInterface(url=f"{url}/", protocol_binding="JSONRPC", protocol_version="1.0")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="echo", name="echo", description="Echo the text.", tags=["echo"])],
    )
    sleep = 0.0 if "--no-sleep" in sys.argv[1:] else 0.2
    handler = DefaultRequestHandler(agent_executor=Echo(sleep), task_store=InMemoryTaskStore(), agent_card=card)
    app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")])
    print(url, flush=True)
    config = uvicorn.Config(app, log_level="warning")
    server = uvicorn.Server(config)
    asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    sys.exit(main())
