//! The A2A 1.0 data model as its JSON-RPC binding writes it: the protobuf
//! messages of `lf.a2a.v1` (`a2a.proto`) in protobuf's JSON mapping
//! (camelCase fields, enums as their full names such as
//! `TASK_STATE_COMPLETED`, a part's content as one of `text`, `raw`, `url`
//! or `data`), as `a2a-sdk` 1.3.0 (Python) and `@a2a-js/sdk` 1.3.0 send and
//! read them.
//!
//! Reading is lenient, as the SDKs' own parsers are: unknown fields are
//! ignored, and an enum value this crate does not know reads as its
//! `Unspecified` variant rather than failing the whole message.

use crate::new_id;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The protocol version this crate speaks, sent in the `A2A-Version`
/// header and named by the card's interface.
pub const PROTOCOL_VERSION: &str = "1.0";

/// The HTTP header that carries the protocol version of a request.
pub const VERSION_HEADER: &str = "A2A-Version";

/// Where a server publishes its agent card, from the server's root.
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";

/// The JSON-RPC binding's name in a card's `supportedInterfaces`.
pub const JSONRPC_BINDING: &str = "JSONRPC";

/// The JSON-RPC methods of the binding (the gRPC service's method names).
pub mod method {
    /// Send a message, answered with the task (or a message) once it stops.
    pub const SEND_MESSAGE: &str = "SendMessage";
    /// Send a message, answered with a server-sent event stream of updates.
    pub const SEND_STREAMING_MESSAGE: &str = "SendStreamingMessage";
    /// Read a task.
    pub const GET_TASK: &str = "GetTask";
    /// Cancel a task.
    pub const CANCEL_TASK: &str = "CancelTask";
}

/// The error codes the binding gives: JSON-RPC's own and A2A's.
pub mod code {
    /// The body is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// The body is JSON but not a JSON-RPC request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// No such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The method's params do not read.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The server failed.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// No task has that id (or it was dropped from memory).
    pub const TASK_NOT_FOUND: i64 = -32001;
    /// The task is over and cannot be canceled.
    pub const TASK_NOT_CANCELABLE: i64 = -32002;
    /// Push notifications are not offered.
    pub const PUSH_NOTIFICATION_NOT_SUPPORTED: i64 = -32003;
    /// The operation is not offered, or not in the task's state.
    pub const UNSUPPORTED_OPERATION: i64 = -32004;
    /// The content types do not match the agent's.
    pub const CONTENT_TYPE_NOT_SUPPORTED: i64 = -32005;
    /// The agent answered out of spec.
    pub const INVALID_AGENT_RESPONSE: i64 = -32006;
    /// The request's `A2A-Version` is not one the server speaks.
    pub const VERSION_NOT_SUPPORTED: i64 = -32009;
}

/// Who wrote a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// The client (a person or an agent using this agent).
    #[serde(rename = "ROLE_USER", alias = "user")]
    User,
    /// The agent.
    #[serde(rename = "ROLE_AGENT", alias = "agent")]
    Agent,
    /// Not said, or a value this crate does not know.
    #[serde(rename = "ROLE_UNSPECIFIED", other)]
    Unspecified,
}

/// Where a task is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskState {
    /// Received, not started.
    #[serde(rename = "TASK_STATE_SUBMITTED", alias = "submitted")]
    Submitted,
    /// Running.
    #[serde(rename = "TASK_STATE_WORKING", alias = "working")]
    Working,
    /// Done (terminal).
    #[serde(rename = "TASK_STATE_COMPLETED", alias = "completed")]
    Completed,
    /// Failed (terminal).
    #[serde(rename = "TASK_STATE_FAILED", alias = "failed")]
    Failed,
    /// Canceled (terminal).
    #[serde(rename = "TASK_STATE_CANCELED", alias = "canceled")]
    Canceled,
    /// Waits for the client's next message on the task (here: a decision
    /// about calls held for approval).
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED", alias = "input-required")]
    InputRequired,
    /// The agent refused the task (terminal).
    #[serde(rename = "TASK_STATE_REJECTED", alias = "rejected")]
    Rejected,
    /// Waits for authentication.
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED", alias = "auth-required")]
    AuthRequired,
    /// Not said, or a value this crate does not know.
    #[serde(rename = "TASK_STATE_UNSPECIFIED", other)]
    Unspecified,
}

impl TaskState {
    /// Whether the task is over: nothing more happens to it.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Canceled | Self::Rejected)
    }

    /// Whether the task stopped to wait for the client (input or
    /// authentication): the end of one exchange, not of the task.
    pub fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }
}

/// One piece of a message or an artifact: text, bytes (`raw`, base64), a
/// URL, or JSON (`data`): exactly one of the four is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// Text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Bytes, base64 in JSON (a file given inline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// A URL to the content (a file given by reference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Any JSON value (structured data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// What the sender says about the part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// The file's name, for `raw` and `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// The content's media type (`text/plain`, `image/png`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self { text: Some(text.into()), ..Self::default() }
    }

    /// A JSON part.
    pub fn data(value: Value) -> Self {
        Self { data: Some(value), ..Self::default() }
    }
}

/// One message of the exchange, the client's or the agent's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// The message's id, made by its sender.
    pub message_id: String,
    /// The conversation it belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The task it continues (a client's answer to `input-required`) or
    /// belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Who wrote it.
    pub role: Role,
    /// What it says.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// What the sender says about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

impl Message {
    /// A message of the agent's, its id new.
    pub fn agent(parts: Vec<Part>) -> Self {
        Self {
            message_id: new_id(),
            context_id: None,
            task_id: None,
            role: Role::Agent,
            parts,
            metadata: None,
        }
    }

    /// A message of the client's, its id new.
    pub fn user(parts: Vec<Part>) -> Self {
        Self { role: Role::User, ..Self::agent(parts) }
    }

    /// The text of its text parts, joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self.parts.iter().filter_map(|part| part.text.as_deref()).collect();
        texts.join("\n")
    }
}

/// A task's state, with the message that explains it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// Where the task is.
    pub state: TaskState,
    /// The agent's message about it: the answer, what input is needed,
    /// what failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When the state was reached (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

impl TaskStatus {
    /// A state without a message.
    pub fn new(state: TaskState) -> Self {
        Self { state, message: None, timestamp: None }
    }
}

/// Something a task made: the answer, a file, data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// The artifact's id, unique within its task.
    pub artifact_id: String,
    /// A name for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its content.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// What the agent says about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// One unit of work: the runs of the agent for a message and the client's
/// answers to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task's id, made by the server.
    pub id: String,
    /// The conversation it belongs to.
    #[serde(default)]
    pub context_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What it made so far.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// The messages exchanged, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// What the agent says about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// A task's new state, as a stream sends it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// The new state.
    pub status: TaskStatus,
    /// What the agent says about the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// An artifact, or a piece of one, as a stream sends it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// The artifact, or the piece to add to the one of the same id.
    pub artifact: Artifact,
    /// Whether the parts add to what was sent under this id (else they
    /// replace it).
    #[serde(default)]
    pub append: bool,
    /// Whether this is the artifact's last piece.
    #[serde(default)]
    pub last_chunk: bool,
    /// What the agent says about the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// One event of a `SendStreamingMessage` stream (`StreamResponse`): one of
/// the four, under its name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// The task as it is (the stream's first event).
    Task(Task),
    /// A message outside any task.
    Message(Message),
    /// A new state.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact, or a piece of one.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// What `SendMessage` answers: the task, or a message when the agent
/// answers without one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SendMessageResponse {
    /// The task the message started or continued.
    Task(Task),
    /// A direct answer.
    Message(Message),
}

/// How the client wants a `SendMessage` answered.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// The media types the client reads.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted_output_modes: Vec<String>,
    /// How many of the task's latest messages to send back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<i32>,
    /// Answer at once with the task as it is, instead of when it stops.
    #[serde(default)]
    pub return_immediately: bool,
}

/// The params of `SendMessage` and `SendStreamingMessage`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// The message.
    pub message: Message,
    /// How to answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// What the client says about the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// The params of `GetTask`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// The task's id.
    pub id: String,
    /// How many of its latest messages to send back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<i32>,
}

/// The params of `CancelTask`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskRequest {
    /// The task's id.
    pub id: String,
}

/// An endpoint of the agent: a URL, the binding it speaks and its version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// Where to send requests.
    pub url: String,
    /// `JSONRPC`, `HTTP+JSON` or `GRPC`.
    pub protocol_binding: String,
    /// The A2A version spoken there (`1.0`).
    #[serde(default)]
    pub protocol_version: String,
}

/// What the agent can do beyond plain requests.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// `SendStreamingMessage` is offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Push notifications are offered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
}

/// One thing the agent is good at, for a client (or its model) choosing
/// an agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// The skill's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Keywords.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Example requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

/// How a client authenticates to the agent (`SecurityScheme`, after
/// OpenAPI's): one of its five kinds is set. A struct of options rather
/// than an enum, as [`Part`] is, so that a card read from a peer whose
/// scheme this crate does not know still reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityScheme {
    /// An API key in a header, a query parameter or a cookie.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_security_scheme: Option<ApiKeySecurityScheme>,
    /// HTTP authentication (`Bearer`, `Basic`...), in the `Authorization`
    /// header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_auth_security_scheme: Option<HttpAuthSecurityScheme>,
    /// OAuth 2.0: its `flows` and `oauth2MetadataUrl`, kept as JSON (this
    /// crate neither runs the flows nor reads them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth2_security_scheme: Option<Value>,
    /// OpenID Connect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_id_connect_security_scheme: Option<OpenIdConnectSecurityScheme>,
    /// Mutual TLS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtls_security_scheme: Option<MutualTlsSecurityScheme>,
}

impl SecurityScheme {
    /// A bearer token in the `Authorization` header.
    pub fn bearer() -> Self {
        Self::http("Bearer")
    }

    /// HTTP authentication with this scheme (`Bearer`, `Basic`), as the
    /// IANA registry names it.
    pub fn http(scheme: impl Into<String>) -> Self {
        Self {
            http_auth_security_scheme: Some(HttpAuthSecurityScheme {
                scheme: scheme.into(),
                ..HttpAuthSecurityScheme::default()
            }),
            ..Self::default()
        }
    }

    /// An API key sent as `name` in `location` (`"header"`, `"query"` or
    /// `"cookie"`).
    pub fn api_key(location: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            api_key_security_scheme: Some(ApiKeySecurityScheme {
                description: String::new(),
                location: location.into(),
                name: name.into(),
            }),
            ..Self::default()
        }
    }

    /// OpenID Connect, its provider's discovery document at `url`.
    pub fn open_id_connect(url: impl Into<String>) -> Self {
        Self {
            open_id_connect_security_scheme: Some(OpenIdConnectSecurityScheme {
                description: String::new(),
                open_id_connect_url: url.into(),
            }),
            ..Self::default()
        }
    }
}

/// An API key, and where the client puts it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeySecurityScheme {
    /// What it is, for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// `header`, `query` or `cookie`.
    #[serde(default)]
    pub location: String,
    /// The header's, parameter's or cookie's name.
    #[serde(default)]
    pub name: String,
}

/// HTTP authentication in the `Authorization` header.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpAuthSecurityScheme {
    /// What it is, for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The scheme (`Bearer`, `Basic`).
    #[serde(default)]
    pub scheme: String,
    /// How a bearer token is made (`JWT`), for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub bearer_format: String,
}

/// OpenID Connect.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenIdConnectSecurityScheme {
    /// What it is, for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The provider's discovery document.
    #[serde(default)]
    pub open_id_connect_url: String,
}

/// Mutual TLS: the client's certificate.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MutualTlsSecurityScheme {
    /// What it is, for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// One way to satisfy the card's security: every scheme named, each with
/// the scopes it needs. A card's requirements are alternatives.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecurityRequirement {
    /// The schemes (names in the card's `securitySchemes`) and their scopes.
    #[serde(default)]
    pub schemes: BTreeMap<String, StringList>,
}

/// A list of strings (protobuf's wrapper, so that it can be a map's value).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StringList {
    /// The strings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub list: Vec<String>,
}

/// The agent card, served at [`AGENT_CARD_PATH`]: who the agent is, where
/// and how to reach it, what it does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// The agent's name.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Its endpoints, the preferred first.
    #[serde(default)]
    pub supported_interfaces: Vec<AgentInterface>,
    /// The agent's own version.
    #[serde(default)]
    pub version: String,
    /// What it can do beyond plain requests.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// The ways to authenticate it takes, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub security_schemes: BTreeMap<String, SecurityScheme>,
    /// Which of them a request needs: any one of these alternatives (none:
    /// the card says nothing of authentication).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub security_requirements: Vec<SecurityRequirement>,
    /// The media types it reads.
    #[serde(default)]
    pub default_input_modes: Vec<String>,
    /// The media types it answers with.
    #[serde(default)]
    pub default_output_modes: Vec<String>,
    /// What it is good at.
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
}

impl AgentCard {
    /// The URL of its JSON-RPC endpoint: the first interface with the
    /// JSON-RPC binding.
    pub fn jsonrpc_url(&self) -> Option<&str> {
        self.supported_interfaces
            .iter()
            .find(|interface| interface.protocol_binding.eq_ignore_ascii_case(JSONRPC_BINDING))
            .map(|interface| interface.url.as_str())
    }
}

/// A JSON-RPC error object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// One of [`code`].
    pub code: i64,
    /// What went wrong, for people.
    pub message: String,
    /// More about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with this code and message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for RpcError {}
