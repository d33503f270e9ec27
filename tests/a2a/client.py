"""The official A2A Python SDK (a2a-sdk 1.3.0) as a client of the a2a_server
example (tools-a2a/examples/a2a_server.rs): the card, a message sent
plainly and streamed, GetTask, and the approval flow (input-required, then
approve on the task, and deny on another), each result asserted.

    python3 tests/a2a/client.py   # builds and starts the example itself
"""

import asyncio
import sys

import httpx
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.helpers.proto_helpers import get_message_text, new_data_part, new_text_message
from a2a.types.a2a_pb2 import GetTaskRequest, Role, SendMessageRequest, TaskState

from example import running


def user(text, task_id=None, parts=None):
    message = new_text_message(text, role=Role.ROLE_USER, task_id=task_id)
    if parts is not None:
        del message.parts[:]
        message.parts.extend(parts)
    return SendMessageRequest(message=message)


async def last_task(client, request):
    """Send, read every event, give back the events and the final task."""
    events = [event async for event in client.send_message(request)]
    assert events, "no event"
    return events


async def main(url):
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        plain = await create_client(card, ClientConfig(streaming=False, httpx_client=http))
        assert card.name == "toolcall-example", card
        assert card.capabilities.streaming
        assert card.supported_interfaces[0].protocol_binding == "JSONRPC", card
        assert card.supported_interfaces[0].protocol_version == "1.0", card
        assert [s.id for s in card.skills] == ["remove_dir"], card.skills

        # Plain SendMessage: one event, the completed task.
        events = await last_task(plain, user("Hello"))
        assert len(events) == 1 and events[0].HasField("task"), events
        task = events[0].task
        assert task.status.state == TaskState.TASK_STATE_COMPLETED, task
        assert get_message_text(task.status.message) == "Hello from toolcall.", task
        assert task.artifacts[0].parts[0].text == "Hello from toolcall.", task
        again = await plain.get_task(GetTaskRequest(id=task.id))
        assert again.status.state == TaskState.TASK_STATE_COMPLETED and again.id == task.id, again

        # Streamed: the task, working, the answer as an artifact, completed.
        streaming = await create_client(card, ClientConfig(streaming=True, httpx_client=http))
        events = await last_task(streaming, user("Hello again"))
        kinds = [event.WhichOneof("payload") for event in events]
        assert kinds == ["task", "status_update", "artifact_update", "status_update"], kinds
        assert events[1].status_update.status.state == TaskState.TASK_STATE_WORKING, events[1]
        assert events[2].artifact_update.artifact.parts[0].text == "Hello from toolcall.", events[2]
        assert events[2].artifact_update.last_chunk, events[2]
        assert events[3].status_update.status.state == TaskState.TASK_STATE_COMPLETED, events[3]

        # Approval: the held call makes the task input-required ...
        events = await last_task(plain, user("Please clean the build"))
        task = events[0].task
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, task
        asked = get_message_text(task.status.message)
        assert "remove_dir" in asked and "call-1" in asked, asked
        # ... and "approve" on the task runs it.
        events = await last_task(plain, user("approve", task_id=task.id))
        done = events[0].task
        assert done.id == task.id and done.status.state == TaskState.TASK_STATE_COMPLETED, done
        assert get_message_text(done.status.message) == "Done: removed /tmp/build.", done

        # Deny, streamed, with a data part naming the call.
        events = await last_task(streaming, user("Clean up again"))
        waiting = [e for e in events if e.HasField("status_update")][-1].status_update
        assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED, events
        decision = new_data_part({"decisions": {"call-1": "deny"}})
        events = await last_task(streaming, user("", task_id=waiting.task_id, parts=[decision]))
        final = [e for e in events if e.HasField("status_update")][-1].status_update
        assert final.status.state == TaskState.TASK_STATE_COMPLETED, events
        assert "denied" in get_message_text(final.status.message), final

        # A second answer to the answered task is refused with the spec's error.
        try:
            await last_task(plain, user("approve", task_id=task.id))
        except Exception as error:  # the SDK's UnsupportedOperationError
            assert type(error).__name__ == "UnsupportedOperationError", repr(error)
        else:
            raise AssertionError("a second answer was accepted")
    print("a2a-sdk 1.3.0 client against the a2a_server example: card, send, stream, get, approve, deny: ok")


if __name__ == "__main__":
    with running("-p", "toolcall-a2a", "--example", "a2a_server") as url:
        asyncio.run(main(url))
    sys.exit(0)
