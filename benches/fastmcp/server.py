#!/usr/bin/env python3
"""The example's get_weather on the official Python SDK's MCPServer (FastMCP
in mcp 1.x), over stdio: the same tool, for benches/fastmcp/bench.py."""
from typing import Annotated

from pydantic import Field

from mcp.server.mcpserver import MCPServer

server = MCPServer("weather-python")


@server.tool(description="Daily temperatures in °C for a city.")
def get_weather(
    city: Annotated[str, Field(description='City name, e.g. "Paris".')],
    days: Annotated[int | None, Field(ge=1, le=16, description="Days ahead to forecast, 1 to 16 (default 1).")] = None,
) -> dict:
    if not city.strip():
        raise ValueError("`city` is empty: ask again with a city name")
    days = days or 1
    seed = sum(city.encode()) % 15
    return {"city": city, "days": days, "celsius": [10.0 + seed + day % 4 for day in range(days)]}


if __name__ == "__main__":
    server.run("stdio")
