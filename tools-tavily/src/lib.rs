//! The Tavily web search tool (see issue 7); empty until it lands.
