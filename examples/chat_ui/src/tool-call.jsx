// One tool call as the UI message holds it: its name, its arguments (as they
// stream, then whole), the buttons while it waits for approval, its outcome
// (JSON output as a table of its fields).
import { getToolName } from "ai";
import { FieldTable } from "./parts.jsx";

export function ToolCall({ part, respond }) {
  const { state } = part;
  // While the arguments stream, show the raw text received so far: the
  // partial parse would hide a half-written value.
  const args = state === "input-streaming" ? (part.rawInput ?? "") : JSON.stringify(part.input ?? null);
  return (
    <div className="tool" data-testid="tool" data-state={state}>
      <div className="tool-head">
        <code className="tool-name" data-testid="tool-name">
          {getToolName(part)}
        </code>
        <span className="tool-state">{STATES[state] ?? state}</span>
      </div>
      <pre className="tool-input" data-testid="tool-input">
        {args}
      </pre>
      {state === "approval-requested" && (
        <div className="approval">
          <button type="button" data-testid="approve" onClick={() => respond({ id: part.approval.id, approved: true })}>
            Approve
          </button>
          <button
            type="button"
            className="deny"
            data-testid="deny"
            onClick={() => respond({ id: part.approval.id, approved: false })}
          >
            Deny
          </button>
        </div>
      )}
      {state === "output-available" &&
        (isRecord(part.output) ? (
          // JSON output (an object): a small table of its fields.
          <FieldTable value={part.output} testId="tool-output" />
        ) : (
          <pre className="tool-output" data-testid="tool-output">
            {typeof part.output === "string" ? part.output : JSON.stringify(part.output)}
          </pre>
        ))}
      {state === "output-error" && (
        <p className="tool-error" data-testid="tool-error">
          {part.errorText}
        </p>
      )}
      {state === "output-denied" && (
        <p className="tool-denied" data-testid="tool-denied">
          Not run: you denied it{part.approval?.reason ? ` (${part.approval.reason})` : ""}.
        </p>
      )}
    </div>
  );
}

function isRecord(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const STATES = {
  "input-streaming": "receiving arguments",
  "input-available": "called",
  "approval-requested": "waiting for your approval",
  "approval-responded": "answered",
  "output-available": "done",
  "output-error": "failed",
  "output-denied": "denied",
};
