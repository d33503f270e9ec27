use std::time::{Duration, Instant};

use serde_json::Value;

use crate::toolset::{Layer, LayerCall, Next};
use crate::{JsonObject, Output, OutputFuture, clean_json};

/// The outputs of tools marked both `read_only` and `idempotent`, kept for
/// `ttl` and answered again for the same arguments without running the
/// tool. Arguments are the same when their cleaned JSON is (fences, key
/// order and spacing aside). At most `capacity` outputs are kept; errors are
/// never kept. Calls of other tools pass through.
///
/// ```
/// use std::time::Duration;
/// use toolcall_core::{Toolset, layers::Cache};
/// let tools = Toolset::new().with_layer(Cache::new(1_000, Duration::from_secs(60)));
/// ```
pub struct Cache {
    outputs: quick_cache::sync::Cache<(String, String), (Instant, Output)>,
    ttl: Duration,
}

impl Cache {
    /// Keep at most `capacity` outputs, each for `ttl`.
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        Self { outputs: quick_cache::sync::Cache::new(capacity.max(1)), ttl }
    }

    /// How many outputs are kept now.
    pub fn len(&self) -> usize {
        self.outputs.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.outputs.is_empty()
    }
}

impl Layer for Cache {
    fn around<'a>(&'a self, call: LayerCall<'a>, next: Next<'a>) -> OutputFuture<'a> {
        let hints = call.tool.spec().annotations();
        let cacheable = hints.read_only == Some(true) && hints.idempotent == Some(true);
        let key = cacheable
            .then(|| canonical(call.arguments))
            .flatten()
            .map(|args| (call.tool.spec().name().to_owned(), args));
        Box::pin(async move {
            let Some(key) = key else {
                return next.call(call).await;
            };
            if let Some((stored, output)) = self.outputs.get(&key) {
                if stored.elapsed() < self.ttl {
                    return Ok(output);
                }
                self.outputs.remove(&key);
            }
            let output = next.call(call).await?;
            self.outputs.insert(key, (Instant::now(), output.clone()));
            Ok(output)
        })
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache").field("len", &self.len()).field("ttl", &self.ttl).finish()
    }
}

/// The arguments as compact JSON with sorted keys; `None` if they are not
/// JSON (such a call fails, and is not kept).
fn canonical(arguments: &str) -> Option<String> {
    let value: Value = serde_json::from_str(&clean_json(arguments)).ok()?;
    Some(sorted(value).to_string())
}

fn sorted(value: Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut fields: Vec<(String, Value)> = object.into_iter().collect();
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(fields.into_iter().map(|(key, value)| (key, sorted(value))).collect::<JsonObject>())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}
