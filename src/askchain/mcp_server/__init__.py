"""askchain as an MCP server (`askchain mcp`) for assistants: Claude Desktop, IDEs, agents; needs the `mcp` extra."""
