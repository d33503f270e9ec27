//! Expansion snapshots: what the macro writes for each form, pretty-printed,
//! for a reviewer to read (`src/snapshots/`).

use proc_macro2::TokenStream;
use quote::quote;

fn expand(attr: TokenStream, item: TokenStream) -> String {
    pretty(crate::expand::tool(attr, item))
}

fn pretty(tokens: TokenStream) -> String {
    match syn::parse_file(&tokens.to_string()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(error) => panic!("the expansion does not parse: {error}\n{tokens}"),
    }
}

#[test]
fn free_fn_with_request() {
    insta::assert_snapshot!(expand(
        quote!(name = "get_weather", title = "Weather", read_only, timeout = "30s"),
        quote! {
            /// Current temperature for a city.
            pub async fn get_weather(ctx: &ToolContext, req: WeatherRequest) -> Result<Weather, WeatherError> {
                weather(ctx, req).await
            }
        },
    ));
}

#[test]
fn free_fn_with_named_arguments() {
    insta::assert_snapshot!(expand(
        quote!(args, struct_name = "Forecast", crate = "my_tools"),
        quote! {
            /// Daily temperatures.
            async fn get_forecast(
                /// City name.
                city: String,
                /// Days ahead, 1 to 16.
                #[schemars(range(min = 1, max = 16))]
                days: Option<u8>,
            ) -> Vec<f32> {
                vec![21.0; days.unwrap_or(1).into()]
            }
        },
    ));
}

#[test]
fn method_with_state_and_its_own_spec() {
    insta::assert_snapshot!(expand(
        quote!(),
        quote! {
            impl Search {
                /// Search the web.
                #[tool(name = "search", spec = self.spec, open_world)]
                pub async fn search(&self, ctx: &ToolContext, req: SearchRequest) -> anyhow::Result<String> {
                    self.client.get(ctx, req).await
                }
            }
        },
    ));
}

#[test]
fn fallback_on_error() {
    insta::assert_snapshot!(expand(
        quote!(name = "get weather"),
        quote! {
            /// Current temperature for a city.
            fn get_weather(req: WeatherRequest) -> String {
                String::new()
            }
        },
    ));
}

#[test]
fn tool_output_of_a_generic_type() {
    insta::assert_snapshot!(pretty(crate::output::derive(quote! {
        #[derive(Serialize, ToolOutput)]
        struct Page<T> {
            items: Vec<T>,
        }
    })));
}
