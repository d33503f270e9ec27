//! Every problem of the arguments at once, as pydantic reports them: serde
//! stops at its first, so when it refuses the arguments the schema's
//! validator reads the same value for the rest (unknown fields, missing
//! fields, wrong types, constraints), and one error lists them all, each
//! with its path, up to [`MAX_REPORTED`] and then how many more.
//!
//! The valid path never comes here: only a call serde refused, or one
//! whose constraints failed, pays for it.

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use super::Parameters;
use crate::ToolError;

/// How many problems one error names; the rest are counted ("and 3 more").
pub(super) const MAX_REPORTED: usize = 10;

/// A step of the path to a value in the arguments.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(super) enum Step {
    Key(String),
    Index(usize),
}

/// One problem: the values it is about (an unknown field's own path, a
/// missing field's, a wrong value's) and the words for the model.
pub(super) struct Problem {
    pub about: Vec<Vec<Step>>,
    pub message: String,
}

/// The problems, worded and bounded: one as it is, several joined by
/// "; ", past [`MAX_REPORTED`] with "and N more".
pub(super) fn worded(problems: &[Problem]) -> String {
    let mut words: Vec<&str> = problems.iter().take(MAX_REPORTED).map(|p| p.message.as_str()).collect();
    let more = problems.len().saturating_sub(MAX_REPORTED);
    let tail = format!("and {more} more");
    if more > 0 {
        words.push(&tail);
    }
    words.join("; ")
}

impl Parameters {
    /// The validator that names every problem of a call serde refused: the
    /// constraints' one, which checks the whole schema, or else one
    /// compiled on the first such call; `None` without validation.
    fn reporter(&self) -> Option<&Validator> {
        match &self.validator {
            Some(Ok(validator)) => Some(validator),
            Some(Err(_)) => None,
            None => {
                self.report.as_ref()?.get_or_init(|| super::schema::compile(&self.schema).ok()).as_deref()
            }
        }
    }

    /// serde's refusal of `json` (`first`, about the value at `at`) with
    /// every other problem the schema finds in it. With none, `first` as
    /// it is, word for word.
    pub(super) fn with_the_rest(&self, first: ToolError, at: Option<Vec<Step>>, json: &str) -> ToolError {
        let ToolError::InvalidArguments(said) = &first else {
            return first;
        };
        // A key given twice has no one value to check the rest against:
        // whichever the schema saw, its problems would be about a value
        // the model may not have meant.
        if said.contains("duplicate field `") {
            return first;
        }
        let Some(validator) = self.reporter() else {
            return first;
        };
        let Ok(value) = serde_json::from_str::<Value>(json) else {
            return first;
        };
        let mut problems = self.problems(validator, &value);
        let covering = at.as_ref().and_then(|at| problems.iter().position(|p| p.about.contains(at)));
        match covering {
            // serde's words name the Rust type, and are today's when the
            // schema finds nothing else.
            Some(index) if problems[index].about.len() == 1 => {
                if problems.len() == 1 {
                    return first;
                }
                problems[index].message.clone_from(said);
            }
            // Several unknown fields of one object, named together.
            Some(_) => {}
            None if problems.is_empty() => return first,
            None => problems.insert(0, Problem { about: at.into_iter().collect(), message: said.clone() }),
        }
        ToolError::invalid_arguments(worded(&problems))
    }

    /// Every problem `validator` finds in `value`, in its order; a
    /// union's failure is reported as its one branch's problems when
    /// only one branch takes a value of that kind (`Option<Struct>`).
    pub(super) fn problems(&self, validator: &Validator, value: &Value) -> Vec<Problem> {
        let mut problems = Vec::new();
        for error in validator.iter_errors(value) {
            self.collect(&error, &mut problems);
        }
        problems
    }

    fn collect(&self, error: &ValidationError<'_>, problems: &mut Vec<Problem>) {
        let at = steps(error);
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => problems.push(Problem {
                about: unexpected.iter().map(|name| with(&at, Step::Key(name.clone()))).collect(),
                message: self.unknown_fields(error, unexpected),
            }),
            ValidationErrorKind::Required { property } => problems.push(Problem {
                about: vec![with(
                    &at,
                    Step::Key(property.as_str().map_or_else(|| property.to_string(), str::to_owned)),
                )],
                message: self.violation(error),
            }),
            ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
                // The branches the value is of a kind for: a branch that
                // failed only on its type at this very path is not.
                let mut fitting = context.iter().filter(|branch| {
                    !matches!(branch.as_slice(), [only] if matches!(only.kind(), ValidationErrorKind::Type { .. }) && steps(only) == at)
                });
                match (fitting.next(), fitting.next()) {
                    (Some(branch), None) if !branch.is_empty() => {
                        branch.iter().for_each(|error| self.collect(error, problems));
                    }
                    _ => problems.push(Problem { about: vec![at], message: self.violation(error) }),
                }
            }
            _ => problems.push(Problem { about: vec![at], message: self.violation(error) }),
        }
    }
}

fn with(path: &[Step], step: Step) -> Vec<Step> {
    let mut path = path.to_vec();
    path.push(step);
    path
}

/// The path of the value `error` is about.
fn steps(error: &ValidationError<'_>) -> Vec<Step> {
    error
        .instance_path()
        .iter()
        .map(|segment| match segment {
            LocationSegment::Property(name) => Step::Key(name.to_string()),
            LocationSegment::Index(index) => Step::Index(index),
        })
        .collect()
}

/// The path serde_path_to_error stopped at, and for a missing field the
/// field's own: `None` where it could not tell.
pub(super) fn serde_steps(error: &serde_path_to_error::Error<serde_json::Error>) -> Option<Vec<Step>> {
    use serde_path_to_error::Segment;
    let mut at = Vec::new();
    for segment in error.path().iter() {
        at.push(match segment {
            Segment::Seq { index } => Step::Index(*index),
            Segment::Map { key } => Step::Key(key.clone()),
            Segment::Enum { variant } => Step::Key(variant.clone()),
            Segment::Unknown => return None,
        });
    }
    let message = error.inner().to_string();
    if let Some(rest) = message.strip_prefix("missing field `") {
        at.push(Step::Key(rest.split('`').next()?.to_owned()));
    }
    Some(at)
}
