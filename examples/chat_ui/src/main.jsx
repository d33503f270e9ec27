// The chat page of examples/chat_ui/main.rs: useChat against the server's
// /api/chat, which streams the agent's run as the AI SDK UI message stream.
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { useState } from "react";
import { createRoot } from "react-dom/client";
import { ToolCall } from "./tool-call.jsx";

const transport = new DefaultChatTransport({ api: "/api/chat" });

function Chat() {
  const { messages, sendMessage, addToolApprovalResponse, status, error } = useChat({
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
              if (part.type === "dynamic-tool" || part.type.startsWith("tool-")) {
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

createRoot(document.getElementById("root")).render(<Chat />);
