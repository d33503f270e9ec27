//! A prompt with an image: the run's input is text and a PNG (a square
//! drawn here, in memory), which the client sends as its provider documents
//! an image in a user message (Chat Completions: an `image_url` content
//! part holding a data URL).
//!
//! With `OPENAI_API_KEY` (or `OPENAI_BASE_URL`) set, the model is OpenAI's
//! (`MODEL`, default gpt-4.1-mini); with neither, a stand-in of the Chat
//! Completions API on 127.0.0.1 (`ScriptedServer`), which prints the content
//! parts it received and answers as the API documents:
//!
//! ```sh
//! cargo run --example image_prompt --features scripted-server
//! ```

use serde_json::Value;
use toolcall::agent::testing::{Reply, ScriptedServer};
use toolcall::agent::{Agent, ApiKey, OpenAiChat};
use toolcall::toolset::Toolset;
use toolcall::{Media, Part};

/// A 16 x 16 PNG, all one colour.
fn square(rgb: [u8; 3]) -> Result<Vec<u8>, png::EncodingError> {
    const SIDE: u32 = 16;
    let pixels: Vec<u8> = rgb.iter().copied().cycle().take((SIDE * SIDE * 3) as usize).collect();
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, SIDE, SIDE);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&pixels)?;
    writer.finish()?;
    Ok(png)
}

/// What the stand-in answers to a request (Chat Completions' JSON), after
/// printing the content parts of its user message.
fn describe(request: &Value) -> Option<Reply> {
    let messages = request["messages"].as_array().into_iter().flatten();
    for message in messages.filter(|message| message["role"] == "user") {
        for part in message["content"].as_array().into_iter().flatten() {
            let shown = match part["type"].as_str() {
                Some("text") => format!("text      {}", part["text"]),
                Some("image_url") => {
                    let url = part["image_url"]["url"].as_str().unwrap_or_default();
                    let start: String = url.chars().take(30).collect();
                    format!("image_url {start}... ({} characters)", url.len())
                }
                other => format!("{other:?}"),
            };
            println!("stand-in received  {shown}");
        }
    }
    Some(Reply::text("A red square."))
}

/// OpenAI's model, or the stand-in, started here (it serves as long as it
/// is kept).
async fn model() -> Result<(OpenAiChat, Option<ScriptedServer>), std::io::Error> {
    if ["OPENAI_API_KEY", "OPENAI_BASE_URL"].iter().any(|name| std::env::var_os(name).is_some()) {
        let name = std::env::var("MODEL").unwrap_or_else(|_| "gpt-4.1-mini".to_owned());
        return Ok((OpenAiChat::new(name), None));
    }
    let server = ScriptedServer::answering(describe).await?;
    let model = OpenAiChat::from_values("stand-in", Some(ApiKey::new("sk-local")), Some(server.base_url()));
    Ok((model, Some(server)))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (model, _stand_in) = model().await?;
    let agent = Agent::new(model, Toolset::new())?.with_instructions("Answer in a few words.");
    let image = Media::bytes(square([220, 30, 30])?, "image/png");
    let run = agent.run([Part::text("What is in this image?"), Part::image(image)]).await?;
    println!("answer  {}", run.answer);
    // The transcript keeps the image; saved as JSON, it loads back whole.
    let saved = serde_json::to_string(&run.transcript)?;
    println!("saved   {} bytes of transcript, the image in base64", saved.len());
    Ok(())
}
