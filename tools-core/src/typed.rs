//! The typed layer a tool's logic is written in, and the JSON adapter that
//! makes every typed tool a [`Tool`]: the argument pipeline
//! ([`ToolSpec::parse`]), then `run`, then the output's content.

use std::future::Future;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::{OutputFuture, Parameters, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

/// A type a tool takes as its arguments: the model's JSON is read into it
/// and its schema is what the model sees. Every `Deserialize + JsonSchema`
/// type is one; there is nothing to implement.
///
/// It is its own trait so that a request type missing a derive gets one
/// error that says which derives to add, instead of one per use inside
/// the SDK.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool's arguments: it must implement `serde::Deserialize` and `schemars::JsonSchema`",
    label = "not Deserialize + JsonSchema",
    note = "add `#[derive(serde::Deserialize, schemars::JsonSchema)]` to the type; with `#[tool(args)]`, every argument's type needs both"
)]
pub trait Arguments: Sized {
    /// The schema the model sees, as [`Parameters::of`] builds it.
    fn parameters() -> Parameters;

    /// Read a call's raw arguments through `spec`'s pipeline ([`ToolSpec::parse`]).
    ///
    /// # Errors
    ///
    /// Those of [`ToolSpec::parse`]: [`ToolError::InvalidArguments`] for arguments that do not
    /// fit, [`ToolError::Failed`] when the schema's constraints do not compile.
    fn parse(spec: &ToolSpec, arguments: &str) -> Result<Self, ToolError>;
}

// Not recommended: the compiler then reports the missing `Arguments` (with
// the note above) rather than each missing derive at each use.
#[diagnostic::do_not_recommend]
impl<R: DeserializeOwned + JsonSchema> Arguments for R {
    fn parameters() -> Parameters {
        Parameters::of::<R>()
    }

    fn parse(spec: &ToolSpec, arguments: &str) -> Result<Self, ToolError> {
        spec.parse(arguments)
    }
}

/// A tool written as a typed `run`: the request is parsed for it, the output
/// and error are turned into the model's content for it.
///
/// `#[tool]` writes exactly this impl. By hand it is a [`ToolSpec`] and a `run`:
///
/// ```
/// use std::sync::LazyLock;
/// use toolcall_core::{Tool, ToolContext, ToolError, ToolSpec, TypedTool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Request {
///     /// City name.
///     city: String,
/// }
///
/// struct GetWeather;
///
/// impl TypedTool for GetWeather {
///     type Request = Request;
///     type Output = String;
///     type Error = ToolError;
///
///     fn spec(&self) -> &ToolSpec {
///         static SPEC: LazyLock<ToolSpec> =
///             LazyLock::new(|| ToolSpec::new::<Request>("get_weather", "Current temperature for a city."));
///         &SPEC
///     }
///
///     async fn run(&self, _ctx: &ToolContext, req: Request) -> Result<String, ToolError> {
///         Ok(format!("21°C in {}", req.city))
///     }
/// }
///
/// let out = futures::executor::block_on(GetWeather.call_text(&ToolContext::new(), r#"{"city":"Paris"}"#));
/// assert_eq!(out.unwrap(), "21°C in Paris");
/// ```
pub trait TypedTool: Send + Sync {
    /// The arguments, parsed from the model's JSON.
    type Request: Arguments + Send;
    /// What `run` returns on success.
    type Output: ToolOutput;
    /// What `run` fails with: anything that converts into [`ToolError`].
    type Error: Into<ToolError>;

    /// The tool's name, description, schema, limits and timeout.
    fn spec(&self) -> &ToolSpec;

    /// The tool's logic.
    fn run(
        &self,
        ctx: &ToolContext,
        req: Self::Request,
    ) -> impl Future<Output = Result<Self::Output, Self::Error>> + Send;

    /// One call from the model's raw arguments: the whole JSON adapter
    /// (size, clean, depth, serde, constraints), then `run`. What
    /// [`Tool::call`] runs, without the box a call through `dyn Tool` needs:
    /// for callers that know the tool's type.
    ///
    /// ```
    /// # use std::sync::LazyLock;
    /// # use toolcall_core::{ToolContext, ToolError, ToolSpec, TypedTool};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema)] struct Request { city: String }
    /// # struct GetWeather;
    /// # impl TypedTool for GetWeather {
    /// #     type Request = Request; type Output = String; type Error = ToolError;
    /// #     fn spec(&self) -> &ToolSpec { static S: LazyLock<ToolSpec> = LazyLock::new(|| ToolSpec::new::<Request>("get_weather", "Weather.")); &S }
    /// #     async fn run(&self, _: &ToolContext, req: Request) -> Result<String, ToolError> { Ok(req.city) }
    /// # }
    /// let out = futures::executor::block_on(GetWeather.call_typed(&ToolContext::new(), "```json\n{\"city\":\"Oslo\"}\n```"));
    /// assert_eq!(out.unwrap(), "Oslo");
    /// ```
    fn call_typed<'a>(
        &'a self,
        ctx: &'a ToolContext,
        arguments: &'a str,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send + 'a {
        async move {
            let req = <Self::Request as Arguments>::parse(TypedTool::spec(self), arguments)?;
            self.run(ctx, req).await.map_err(Into::into)
        }
    }
}

/// The JSON adapter: the argument pipeline (size, clean, depth, serde,
/// constraints), then `run`, then the output.
impl<T: TypedTool> Tool for T {
    fn spec(&self) -> &ToolSpec {
        TypedTool::spec(self)
    }

    fn call<'a>(&'a self, ctx: &'a ToolContext, arguments: &'a str) -> OutputFuture<'a> {
        Box::pin(async move { self.call_typed(ctx, arguments).await?.into_output() })
    }
}
