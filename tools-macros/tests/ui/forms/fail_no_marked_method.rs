use toolcall::tool;

struct Search;

#[tool]
impl Search {
    /// Doc.
    async fn search(&self) -> String {
        String::new()
    }
}

fn main() {}
