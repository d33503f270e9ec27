// The chat page of examples/chat_ui/main.rs: useChat against the server's
// /api/chat, which streams the agent's run as the AI SDK UI message stream.
// The chat's id is in the page's address (`?chat=...`): a page that reloads
// shows the chat's stored messages (GET /api/chat/{id}) and reattaches to a
// run still going (useChat's `resume`: GET /api/chat/{id}/stream).
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, getToolName, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { useState } from "react";
import { createRoot } from "react-dom/client";
import { DataPart, FilePart, Reasoning } from "./parts.jsx";
import { ToolCall } from "./tool-call.jsx";

const transport = new DefaultChatTransport({ api: "/api/chat" });

// The chat's id from the page's address, or a new one; `known` when the
// address had it, so there may be a chat to show and a run to reattach to.
function chatOfAddress() {
  const id = new URL(window.location.href).searchParams.get("chat");
  return id ? { id, known: true } : { id: crypto.randomUUID(), known: false };
}

// The chat's id put in the address once it has a question, replacing the
// address (Back does not lead to the page without it): a reload shows it
// again. Before that a reload is a new chat, with nothing to load.
function keepInAddress(id) {
  const address = new URL(window.location.href);
  if (address.searchParams.get("chat") === id) return;
  address.searchParams.set("chat", id);
  window.history.replaceState(null, "", address);
}

// The chat's stored messages as useChat takes them; none if there is no
// such chat (404).
async function storedMessages(id) {
  const response = await fetch(`/api/chat/${encodeURIComponent(id)}`);
  if (response.status === 404) return [];
  if (!response.ok) {
    throw new Error(`the chat could not be loaded (${response.status}): ${await response.text()}`);
  }
  return response.json();
}

function Chat({ id, stored, resume }) {
  const { messages, sendMessage, addToolApprovalResponse, status, error } = useChat({
    id,
    messages: stored,
    // A run the server still has going (the page reloaded mid-answer) is
    // streamed again from its start; none: nothing happens.
    resume,
    transport,
    // Once every held call of the last turn has an answer, send them: the
    // server resumes the paused run from these responses.
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState("");
  const busy = status === "submitted" || status === "streaming";
  // The server keeps the run paused on the held call until it is answered,
  // and refuses a new question meanwhile: ask for the answer instead.
  const waiting = messages.some((message) => message.parts.some((part) => part.state === "approval-requested"));

  function submit(event) {
    event.preventDefault();
    const text = input.trim();
    if (!text || busy || waiting) return;
    keepInAddress(id);
    sendMessage({ text });
    setInput("");
  }

  return (
    <main>
      <h1>tools chat</h1>
      <ol className="messages" data-testid="messages">
        {messages.map((message) => (
          <li key={message.id} className={`message ${message.role}`} data-testid="message" data-role={message.role}>
            <span className="role">{message.role === "user" ? "you" : "assistant"}</span>
            {message.parts.map((part, index) => {
              if (part.type === "text") {
                return (
                  <p key={index} className="text" data-testid="text">
                    {part.text}
                  </p>
                );
              }
              if (part.type === "reasoning") return <Reasoning key={index} part={part} />;
              if (part.type === "file") return <FilePart key={index} part={part} />;
              if (part.type.startsWith("data-")) return <DataPart key={`${part.type}-${part.id ?? index}`} part={part} />;
              if (part.type === "dynamic-tool" || part.type.startsWith("tool-")) {
                // The typed answer's call: its value is shown as the card
                // of the data-answer part.
                if (getToolName(part) === "final_answer") return null;
                return <ToolCall key={part.toolCallId} part={part} respond={addToolApprovalResponse} />;
              }
              return null;
            })}
          </li>
        ))}
      </ol>
      {error && (
        <p className="error" data-testid="error">
          {error.message}
        </p>
      )}
      <form onSubmit={submit} data-testid="chat-form">
        <input
          value={input}
          onChange={(event) => setInput(event.target.value)}
          placeholder={waiting ? "Approve or deny the call first" : "Ask about the weather"}
          aria-label="message"
          data-testid="chat-input"
        />
        <button type="submit" disabled={busy || waiting || !input.trim()} data-testid="send">
          Send
        </button>
      </form>
      <p className="status" data-testid="status" data-status={status}>
        {status}
      </p>
    </main>
  );
}

const root = createRoot(document.getElementById("root"));
const chat = chatOfAddress();
try {
  // A chat id made just now names no chat yet: nothing to load or resume.
  const stored = chat.known ? await storedMessages(chat.id) : [];
  root.render(<Chat id={chat.id} stored={stored} resume={chat.known} />);
} catch (error) {
  root.render(
    <main>
      <h1>tools chat</h1>
      <p className="error" data-testid="error">
        {error.message}
      </p>
    </main>,
  );
}
