//! A toolset the size of several MCP servers: 300 tools, 30 services of 10
//! each, with the overlap real ones have (every service creates, lists,
//! gets, updates and deletes things; several services have issues,
//! messages or files). And 100 requests, each written as a person would
//! ask, for one of them.
#![allow(dead_code)]

use serde_json::{Value, json};
use toolcall_core::{JsonObject, Output, OutputFuture, Parameters, Tool, ToolContext, ToolSpec};

/// A service: its name prefix, the product as people write it, and two
/// kinds of thing it holds, each with the word a person might use instead.
type Service = (&'static str, &'static str, [(&'static str, &'static str); 2]);

const SERVICES: [Service; 30] = [
    ("github", "GitHub", [("issue", "bug"), ("pull_request", "PR")]),
    ("gitlab", "GitLab", [("issue", "bug"), ("merge_request", "MR")]),
    ("jira", "Jira", [("issue", "ticket"), ("sprint", "iteration")]),
    ("linear", "Linear", [("issue", "task"), ("project", "roadmap item")]),
    ("slack", "Slack", [("message", "post"), ("channel", "room")]),
    ("discord", "Discord", [("message", "post"), ("server", "guild")]),
    ("teams", "Microsoft Teams", [("message", "chat"), ("meeting", "call")]),
    ("gmail", "Gmail", [("email", "mail"), ("label", "tag")]),
    ("outlook", "Outlook", [("email", "mail"), ("contact", "address book entry")]),
    ("calendar", "Google Calendar", [("event", "appointment"), ("calendar", "schedule")]),
    ("zoom", "Zoom", [("meeting", "video call"), ("recording", "video")]),
    ("notion", "Notion", [("page", "doc"), ("database", "table")]),
    ("confluence", "Confluence", [("page", "wiki article"), ("space", "wiki")]),
    ("drive", "Google Drive", [("file", "document"), ("folder", "directory")]),
    ("dropbox", "Dropbox", [("file", "upload"), ("shared_link", "share link")]),
    ("s3", "Amazon S3", [("object", "blob"), ("bucket", "storage bucket")]),
    ("stripe", "Stripe", [("payment", "charge"), ("customer", "payer")]),
    ("paypal", "PayPal", [("invoice", "bill"), ("payout", "transfer")]),
    ("shopify", "Shopify", [("order", "purchase"), ("product", "listing")]),
    ("salesforce", "Salesforce", [("lead", "prospect"), ("opportunity", "deal")]),
    ("hubspot", "HubSpot", [("contact", "person"), ("deal", "sale")]),
    ("zendesk", "Zendesk", [("ticket", "support request"), ("article", "help article")]),
    ("intercom", "Intercom", [("conversation", "chat"), ("user", "customer")]),
    ("twilio", "Twilio", [("sms", "text message"), ("call", "phone call")]),
    ("sendgrid", "SendGrid", [("email", "newsletter"), ("template", "email template")]),
    ("datadog", "Datadog", [("monitor", "alert"), ("dashboard", "board")]),
    ("pagerduty", "PagerDuty", [("incident", "outage"), ("schedule", "on-call rotation")]),
    ("sentry", "Sentry", [("issue", "error"), ("release", "deploy")]),
    ("postgres", "Postgres", [("table", "relation"), ("row", "record")]),
    ("redis", "Redis", [("key", "cached value"), ("stream", "queue")]),
];

/// (verb in the name, its description, how a person asks for it: naming
/// what they want done, in their own words for the rest).
const ACTIONS: [(&str, &str, &str); 5] = [
    ("create", "Create a new {thing} in {product}.", "create a new {word} in {product} for me"),
    (
        "list",
        "List the {thing}s in {product}, newest first, with optional filters.",
        "list the {word}s we have in {product}",
    ),
    (
        "get",
        "Get one {thing} from {product} by its id, with all its fields.",
        "get me the details of that {word} in {product}",
    ),
    (
        "update",
        "Update the fields of an existing {thing} in {product}.",
        "update the {word} in {product} with the new title",
    ),
    ("delete", "Delete a {thing} from {product} permanently.", "delete this {word} from {product}"),
];

/// One generated tool: a name, a description, a schema; its call echoes.
pub(crate) struct Generated {
    pub name: String,
    pub spec: ToolSpec,
}

impl Tool for Generated {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    fn call<'a>(&'a self, _: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        Box::pin(async move { Ok(Output::text(format!("{} ran with {arguments}", self.name))) })
    }
}

fn fill(template: &str, thing: &str, word: &str, product: &str) -> String {
    template
        .replace("{thing}", &thing.replace('_', " "))
        .replace("{word}", word)
        .replace("{product}", product)
}

/// The arguments a tool of this action on this kind of thing takes.
fn schema(verb: &str, thing: &str, product: &str) -> JsonObject {
    let thing = thing.replace('_', " ");
    let mut properties = serde_json::Map::new();
    let mut required = Vec::new();
    if verb != "create" && verb != "list" {
        properties.insert(
            "id".into(),
            json!({"type": "string", "description": format!("The {thing}'s id in {product}.")}),
        );
        required.push("id");
    }
    match verb {
        "create" | "update" => {
            properties.insert(
                "title".into(),
                json!({"type": "string", "description": format!("A short title for the {thing}.")}),
            );
            properties.insert(
                "body".into(),
                json!({"type": "string", "description": "The full text, in Markdown."}),
            );
            if verb == "create" {
                required.push("title");
            }
        }
        "list" => {
            properties.insert(
                "query".into(),
                json!({"type": "string", "description": format!("Words the {thing}s must contain.")}),
            );
            properties.insert("limit".into(), json!({"type": "integer", "minimum": 1, "maximum": 100, "description": "At most this many, 20 by default."}));
        }
        _ => {}
    }
    let schema = json!({"type": "object", "properties": properties, "required": required});
    let Value::Object(object) = schema else { unreachable!("a json! object") };
    object
}

/// The 300 tools, service by service.
pub(crate) fn tools() -> Vec<Generated> {
    let mut out = Vec::with_capacity(300);
    for (prefix, product, things) in SERVICES {
        for (thing, _) in things {
            for (verb, description, _) in ACTIONS {
                let name = format!("{prefix}_{verb}_{thing}");
                let description = fill(description, thing, thing, product);
                let parameters = Parameters::from_schema(schema(verb, thing, product));
                let spec = ToolSpec::from_parameters(name.clone(), description, parameters);
                out.push(Generated { name, spec });
            }
        }
    }
    out
}

/// 100 requests, each for a different tool, and the tool each one needs:
/// a spread over services, things and actions, the thing called by the
/// other word for it every other time.
pub(crate) fn queries() -> Vec<(String, String)> {
    let tools = tools();
    (0..100usize)
        .map(|i| {
            // 37 is coprime with 300: a hundred different tools.
            let at = (i * 37) % 300;
            let (_, product, things) = SERVICES[at / 10];
            let (thing, synonym) = things[(at % 10) / 5];
            let (_, _, ask) = ACTIONS[at % 5];
            let word = if i % 2 == 0 { thing.replace('_', " ") } else { synonym.to_owned() };
            (format!("Please {}", fill(ask, thing, &word, product)), tools[at].name.clone())
        })
        .collect()
}
