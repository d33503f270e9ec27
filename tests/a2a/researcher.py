"""The official A2A Python SDK (a2a-sdk 1.3.0) as a client of the researcher
example (examples/researcher.rs), as the guide's chapter "Agents as tools"
shows it (src/guide/subagents.md; `ask` is the chapter's code): the card,
a question whose note waits for approval (input-required), approve on the
task, and the answer, each asserted.

    python3 tests/a2a/researcher.py                        # builds and starts the example itself
    python3 tests/a2a/researcher.py http://127.0.0.1:9999  # or one already running
"""

import asyncio
import sys

import httpx
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.helpers.proto_helpers import get_message_text, new_text_message
from a2a.types.a2a_pb2 import Role, SendMessageRequest, TaskState

from example import running


def user(text, task_id=None):
    return SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER, task_id=task_id))


async def ask(url):
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        assert card.name == "researcher"
        assert [skill.id for skill in card.skills] == ["search", "save_note"]
        client = await create_client(card, ClientConfig(streaming=False, httpx_client=http))

        # The question: the researcher searches, then its save_note waits.
        question = user("How many people live in Oslo? Note it.")
        [event] = [event async for event in client.send_message(question)]
        task = event.task
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        asked = get_message_text(task.status.message)
        assert "`save_note`" in asked and "(call i2)" in asked, asked

        # Approved on the same task, the note is saved and the answer comes.
        [event] = [event async for event in client.send_message(user("approve", task_id=task.id))]
        done = event.task
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        answer = "Oslo has 709,000 inhabitants (ssb.no). Saved to the team's notes."
        assert get_message_text(done.status.message) == answer
        assert done.artifacts[0].parts[0].text == answer


def main():
    if len(sys.argv) > 1:
        asyncio.run(ask(sys.argv[1]))
    else:
        with running("--example", "researcher", "--features", "a2a") as url:
            asyncio.run(ask(url))
    print("a2a-sdk 1.3.0 client against the researcher example: card, question, input-required, approve, answer: ok")


if __name__ == "__main__":
    main()
