// The parts of an assistant message beyond text and tool calls, as the
// server's UI message stream gives them: a tool's images and files (`file`
// parts), its artifact (a `data-{tool}` part: data for the page, which the
// model never sees), the run's typed answer (`data-answer`), and the
// model's reasoning, folded.

// A value as a small two-column table: one row per field.
export function FieldTable({ value, testId }) {
  return (
    <table className="fields" data-testid={testId}>
      <tbody>
        {Object.entries(value).map(([name, field]) => (
          <tr key={name}>
            <th scope="row">{name}</th>
            <td>{typeof field === "object" && field !== null ? JSON.stringify(field) : String(field)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

// An image inline; any other file as a link to it.
export function FilePart({ part }) {
  if (part.mediaType.startsWith("image/")) {
    return <img className="file-image" data-testid="file-image" src={part.url} alt={part.filename ?? "an image from a tool"} />;
  }
  return (
    <a className="file" data-testid="file" href={part.url} download={part.filename}>
      {part.filename ?? `a file (${part.mediaType})`}
    </a>
  );
}

// get_weather's artifact: the day's forecast, hour by hour.
function Hourly({ data }) {
  return (
    <table className="hourly" data-testid="hourly">
      <caption>Today in {data.city}</caption>
      <thead>
        <tr>
          <th scope="col">hour</th>
          <th scope="col">°C</th>
          <th scope="col">sky</th>
        </tr>
      </thead>
      <tbody>
        {data.hours.map((hour) => (
          <tr key={hour.hour} data-testid="hour">
            <td>{hour.hour}</td>
            <td>{hour.celsius}</td>
            <td>{hour.sky}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

// The run's typed answer, a Forecast, as a card.
function AnswerCard({ answer }) {
  return (
    <section className="card" data-testid="answer">
      <h2 data-testid="answer-city">{answer.city}</h2>
      <p className="card-now">
        <span data-testid="answer-celsius">{answer.celsius == null ? "–" : `${answer.celsius}°C`}</span>{" "}
        <span data-testid="answer-sky">{answer.sky ?? "not checked"}</span>
      </p>
      <p className="card-summary" data-testid="answer-summary">
        {answer.summary}
      </p>
    </section>
  );
}

// A data part: the ones this page knows drawn for people, others as JSON.
export function DataPart({ part }) {
  if (part.type === "data-answer") return <AnswerCard answer={part.data} />;
  if (part.type === "data-get_weather" && Array.isArray(part.data?.hours)) return <Hourly data={part.data} />;
  return (
    <pre className="data" data-testid="data">
      {JSON.stringify(part.data)}
    </pre>
  );
}

// The model's reasoning, folded: open it to read.
export function Reasoning({ part }) {
  return (
    <details className="reasoning" data-testid="reasoning">
      <summary>{part.state === "streaming" ? "thinking…" : "reasoning"}</summary>
      <p>{part.text}</p>
    </details>
  );
}
