"""Function-calling tool parameter schemas of the kind agents send (OpenAI strict tools, Anthropic
tool input_schema, MCP server tools). Mostly small, described, closed objects."""
from dsl import *


def tool(api, name, d, root, defs=None):
    schema(f"{api}_tool_{name}", root, title=name, d=d, defs=defs)


UNIT = E("celsius", "fahrenheit", d="Temperature unit.")

tool("openai", "get_weather", "Get the current weather for a location.",
     O("location unit", location=S("City and country, e.g. Paris, France."), unit=UNIT))
tool("openai", "get_forecast", "Get a multi-day weather forecast.",
     O("location days", location=S("City name or lat,lon."), days=I("Number of days.", min=1, max=14), unit=OPT(UNIT),
       include_hourly=B("Include hourly breakdown.")))
tool("openai", "search_web", "Search the web and return the top results.",
     O("query", query=S("The search query.", min=1, max=400), num_results=I(min=1, max=20, default=5),
       recency=E("day", "week", "month", "year", "any", d="Restrict to results newer than this."), site=OPT(S(fmt="hostname"))))
tool("openai", "send_email", "Send an email on the user's behalf.",
     O("to subject body", to=A(EMAIL(), min=1, max=20), cc=A(EMAIL(), max=20), subject=S(max=200), body=S("Plain-text body."),
       importance=E("low", "normal", "high", default="normal")))
tool("openai", "create_calendar_event", "Create an event in the user's calendar.",
     O("title start end", title=S(max=200), start=TS("Start time."), end=TS("End time."), attendees=A(EMAIL()), location=OPT(S()),
       description=OPT(S()), reminder_minutes=I(min=0, max=10080)))
tool("openai", "book_flight", "Book a flight for the user.",
     O("origin destination departure_date passengers", origin=S("IATA airport code.", pat="^[A-Z]{3}$"), destination=S(pat="^[A-Z]{3}$"),
       departure_date=DATE(), return_date=OPT(DATE()), passengers=I(min=1, max=9), cabin=E("economy", "premium_economy", "business", "first"),
       nonstop_only=B()))
tool("openai", "search_hotels", "Find hotels in a city for the given dates.",
     O("city check_in check_out", city=S(), check_in=DATE(), check_out=DATE(), guests=I(min=1, max=10, default=2), rooms=I(min=1, max=5),
       max_price_per_night=N(min=0), amenities=A(E("wifi", "pool", "parking", "gym", "breakfast", "pet_friendly", "spa"), max=7),
       sort_by=E("price", "rating", "distance")))
tool("openai", "get_stock_price", "Get the latest price for a stock ticker.",
     O("ticker", ticker=S(pat="^[A-Z]{1,5}(\\.[A-Z]{1,2})?$"), exchange=E("NYSE", "NASDAQ", "LSE", "TSE", "XETRA")))
tool("openai", "convert_currency", "Convert an amount between currencies.",
     O("amount from to", amount=N(min=0), from_=CURRENCY(), to=CURRENCY(), date=OPT(DATE("Historical rate date; null for today."))))
tool("openai", "calculator", "Evaluate an arithmetic expression.",
     O("expression", expression=S("Expression using + - * / ^ and parentheses.", pat="^[0-9+\\-*/^(). ]+$", max=200)))
tool("openai", "run_sql_query", "Run a read-only SQL query against the analytics warehouse.",
     O("query", query=S(min=1), database=E("analytics", "billing", "events"), limit=I(min=1, max=10000, default=100),
       timeout_seconds=I(min=1, max=300)))
tool("openai", "lookup_order", "Look up an order by its id.", O("order_id", order_id=S(pat="^ORD-[0-9]{8}$")))
tool("openai", "cancel_order", "Cancel an order that has not shipped.",
     O("order_id reason", order_id=S(pat="^ORD-[0-9]{8}$"), reason=E("changed_mind", "ordered_by_mistake", "found_cheaper", "too_slow", "other"),
       note=OPT(S(max=500))))
tool("openai", "refund_payment", "Refund all or part of a payment.",
     O("payment_id", payment_id=S(), amount_cents=OPT(I(min=1)), reason=OPT(S())))
tool("openai", "set_reminder", "Set a reminder for the user.",
     O("text when", text=S(max=280), when=ONE(TS("Absolute time."), I("Minutes from now.", min=1, max=525600)),
       repeat=E("none", "daily", "weekly", "monthly")))
tool("openai", "translate_text", "Translate text into another language.",
     O("text target_language", text=S(max=5000), source_language=OPT(S(pat="^[a-z]{2}$")), target_language=S(pat="^[a-z]{2}$"),
       formality=E("default", "more", "less")))
tool("openai", "summarize_url", "Fetch a page and summarise it.",
     O("url", url=URL(), max_words=I(min=10, max=1000, default=150), style=E("bullets", "paragraph", "tldr")))
tool("openai", "create_ticket", "Open a support ticket.",
     O("title description priority", title=S(max=120), description=S(), priority=E("p0", "p1", "p2", "p3"),
       component=E("billing", "auth", "api", "dashboard", "mobile"), labels=A(S(pat="^[a-z0-9-]+$"), max=5)))
tool("openai", "get_directions", "Directions between two places.",
     O("origin destination", origin=S(), destination=S(), mode=E("driving", "walking", "bicycling", "transit"), avoid=A(E("tolls", "highways", "ferries")),
       depart_at=OPT(TS())))
tool("openai", "play_music", "Play music on the user's speaker.",
     O("query", query=S(), kind=E("track", "album", "artist", "playlist"), shuffle=B(), volume=I(min=0, max=100), device=OPT(S())))
tool("openai", "control_light", "Turn a smart light on or off and set it.",
     O("device_id state", device_id=S(), state=E("on", "off"), brightness=I(min=0, max=100), color=S(pat="^#[0-9a-fA-F]{6}$"),
       transition_ms=I(min=0, max=60000)))
tool("openai", "set_thermostat", "Set the thermostat.",
     O("mode", mode=E("heat", "cool", "auto", "off"), target=N(min=5, max=35), unit=UNIT, hold_until=OPT(TS())))
tool("openai", "add_todo", "Add an item to a to-do list.",
     O("title", title=S(max=200), list=S(default="Inbox"), due=OPT(DATE()), priority=I(min=1, max=4), tags=A(S(), max=10)))
tool("openai", "extract_entities", "Extract named entities from text.",
     O("entities", entities=A(O("text type start end", text=S(), type=E("PERSON", "ORG", "LOCATION", "DATE", "MONEY", "PRODUCT", "EVENT"),
                                start=I(min=0), end=I(min=0), confidence=N(min=0, max=1))),
       language=S(pat="^[a-z]{2}$")))
tool("openai", "classify_sentiment", "Classify the sentiment of a text.",
     O("label confidence", label=E("positive", "neutral", "negative", "mixed"), confidence=N(min=0, max=1), aspects=A(O("aspect label", aspect=S(), label=E("positive", "neutral", "negative"))))) 
tool("openai", "generate_image", "Generate an image from a prompt.",
     O("prompt", prompt=S(max=4000), size=E("1024x1024", "1024x1792", "1792x1024"), quality=E("standard", "hd"), n=I(min=1, max=4),
       style=E("vivid", "natural")))
tool("openai", "code_interpreter", "Run Python code in a sandbox.",
     O("code", code=S(min=1), timeout_seconds=I(min=1, max=120, default=30), files=A(S(pat="^file-[A-Za-z0-9]+$"))))
tool("openai", "query_knowledge_base", "Retrieve passages from the company knowledge base.",
     O("query", query=S(), top_k=I(min=1, max=50, default=8), filters=O("", department=E("hr", "legal", "engineering", "sales", "support"),
                                                                         updated_after=DATE(), tags=A(S()))))
tool("openai", "update_crm_contact", "Update fields of a CRM contact.",
     O("contact_id fields", contact_id=S(), fields=O("", email=EMAIL(), phone=S(), company=S(), title=S(), stage=E("lead", "prospect", "customer", "churned"))))
tool("openai", "schedule_meeting", "Find a time and schedule a meeting.",
     O("participants duration_minutes", participants=A(EMAIL(), min=1, max=50), duration_minutes=I(min=15, max=480),
       earliest=OPT(TS()), latest=OPT(TS()), title=S(), video=B(default=True)))
tool("openai", "get_exchange_rates", "Latest FX rates for a base currency.",
     O("base", base=CURRENCY(), symbols=A(CURRENCY(), max=30)))
tool("openai", "final_answer", "Return the final answer to the user.",
     O("answer", answer=S(), sources=A(URL(), max=10), confidence=E("low", "medium", "high")))
tool("openai", "ask_clarifying_question", "Ask the user a clarifying question.",
     O("question", question=S(max=300), options=A(S(max=80), max=6)))

tool("anthropic", "bash", "Run a shell command in the sandbox.",
     O("command", command=S(), restart=B("Restart the shell instead of running a command.")))
tool("anthropic", "str_replace_editor", "View and edit files.",
     O("command path", command=E("view", "create", "str_replace", "insert", "undo_edit"), path=S(pat="^/.*$"), file_text=S(),
       old_str=S(), new_str=S(), insert_line=I(min=0), view_range=T(I(min=1), I(min=-1), min=2, max=2)))
tool("anthropic", "computer", "Control the mouse and keyboard of a virtual display.",
     O("action", action=E("key", "type", "mouse_move", "left_click", "left_click_drag", "right_click", "middle_click", "double_click", "screenshot", "cursor_position", "scroll"),
       coordinate=T(I(min=0), I(min=0), min=2, max=2), text=S(), scroll_direction=E("up", "down", "left", "right"), scroll_amount=I(min=1, max=20)))
tool("anthropic", "web_fetch", "Fetch a URL and return its text.",
     O("url", url=URL(), max_bytes=I(min=1024, max=10485760)))
tool("anthropic", "memory_write", "Store a fact for later conversations.",
     O("key value", key=S(pat="^[a-z0-9_.-]{1,64}$"), value=S(max=2000), ttl_days=OPT(I(min=1, max=3650))))
tool("anthropic", "record_summary", "Record a structured summary of a document.",
     O("title key_points", title=S(), key_points=A(S(), min=1, max=10), sentiment=E("positive", "neutral", "negative"),
       topics=A(S(), max=5)))
tool("anthropic", "get_customer_info", "Retrieve customer information by id.",
     O("customer_id", customer_id=S(pat="^C[0-9]{6}$")))
tool("anthropic", "get_order_details", "Retrieve details of a specific order.", O("order_id", order_id=S()))
tool("anthropic", "search_docs", "Search product documentation.",
     O("query", query=S(), product=E("api", "console", "sdk-python", "sdk-typescript"), version=OPT(S(pat="^[0-9]+\\.[0-9]+$"))))

tool("mcp", "filesystem_read_file", "Read the complete contents of a file.", O("path", path=S()))
tool("mcp", "filesystem_write_file", "Create or overwrite a file.", O("path content", path=S(), content=S()))
tool("mcp", "filesystem_edit_file", "Make line-based edits to a text file.",
     O("path edits", path=S(), edits=A(O("oldText newText", oldText=S(), newText=S()), min=1), dryRun=B(default=False)))
tool("mcp", "filesystem_list_directory", "List directory entries.", O("path", path=S()))
tool("mcp", "filesystem_search_files", "Recursively search for files matching a pattern.",
     O("path pattern", path=S(), pattern=S(), excludePatterns=A(S())))
tool("mcp", "github_create_issue", "Create a GitHub issue.",
     O("owner repo title", owner=S(), repo=S(), title=S(), body=S(), assignees=A(S()), labels=A(S()), milestone=I(min=1)))
tool("mcp", "github_search_code", "Search code across GitHub.",
     O("q", q=S(), sort=C("indexed"), order=E("asc", "desc"), per_page=I(min=1, max=100), page=I(min=1)))
tool("mcp", "postgres_query", "Run a read-only SQL query.", O("sql", sql=S()))
tool("mcp", "sqlite_write_query", "Execute an INSERT, UPDATE or DELETE.", O("query", query=S(pat="^ *(INSERT|UPDATE|DELETE|insert|update|delete) ")))
tool("mcp", "puppeteer_navigate", "Navigate the browser to a URL.", O("url", url=URL(), launchOptions=MAP(TYPES("string", "boolean", "number", "array")),
                                                                       allowDangerous=B()))
tool("mcp", "puppeteer_click", "Click an element on the page.", O("selector", selector=S()))
tool("mcp", "puppeteer_fill", "Fill out an input field.", O("selector value", selector=S(), value=S()))
tool("mcp", "slack_post_message", "Post a message to a Slack channel.", O("channel_id text", channel_id=S(), text=S()))
tool("mcp", "memory_create_entities", "Create entities in the knowledge graph.",
     O("entities", entities=A(O("name entityType observations", name=S(), entityType=S(), observations=A(S())), min=1)))
tool("mcp", "memory_create_relations", "Create relations between entities.",
     O("relations", relations=A(O("from to relationType", from_=S(), to=S(), relationType=S()), min=1)))
tool("mcp", "brave_web_search", "Search the web with Brave.",
     O("query", query=S(max=400), count=I(min=1, max=20, default=10), offset=I(min=0, max=9, default=0)))
tool("mcp", "google_maps_geocode", "Convert an address to coordinates.", O("address", address=S()))
tool("mcp", "fetch", "Fetch a URL and extract its contents as markdown.",
     O("url", url=URL(), max_length=I(xmin=0, xmax=1000000, default=5000), start_index=I(min=0, default=0), raw=B(default=False)))
tool("mcp", "time_convert", "Convert time between timezones.",
     O("source_timezone time target_timezone", source_timezone=S(), time=S(pat="^([01][0-9]|2[0-3]):[0-5][0-9]$"), target_timezone=S()))
tool("mcp", "git_commit", "Record changes to the repository.", O("repo_path message", repo_path=S(), message=S(min=1)))
tool("mcp", "sequential_thinking", "A step of structured reasoning.",
     O("thought nextThoughtNeeded thoughtNumber totalThoughts", thought=S(), nextThoughtNeeded=B(), thoughtNumber=I(min=1),
       totalThoughts=I(min=1), isRevision=B(), revisesThought=I(min=1), branchFromThought=I(min=1), branchId=S(), needsMoreThoughts=B()))

# A tool whose argument is a choice of shapes, with the discriminator written as const.
tool("openai", "update_shape", "Draw or update a shape on the canvas.",
     O("shape", shape=ANY(O("kind x y radius", kind=C("circle"), x=N(), y=N(), radius=N(min=0)),
                          O("kind x y width height", kind=C("rect"), x=N(), y=N(), width=N(min=0), height=N(min=0)),
                          O("kind points", kind=C("polygon"), points=A(T(N(), N()), min=3))),
       fill=OPT(S(pat="^#[0-9a-fA-F]{6}$"))))
tool("openai", "set_value", "Set a configuration value of any scalar type.",
     O("key value", key=S(pat="^[a-z][a-z0-9_.]*$"), value=ONE(S(), I(), B(), NULL())))
tool("openai", "plan_steps", "Produce a plan as an ordered list of steps.",
     O("goal steps", goal=S(), steps=A(O("id action", id=I(min=1), action=S(), depends_on=A(I(min=1)), tool=OPT(S())), min=1, max=20)))
tool("openai", "json_patch", "Apply RFC 6902 operations to a document.",
     O("operations", operations=A(O("op path", op=E("add", "remove", "replace", "move", "copy", "test"), path=S(pat="^(/[^/]*)*$"), from_=S(),
                                     value=TYPES("string", "number", "boolean", "null", "object", "array")), min=1)))
tool("openai", "rate_limit_status", "Report the API rate limit state.",
     O("limit remaining reset_at", limit=I(min=0), remaining=I(min=0), reset_at=TS(), scope=C("user")))
tool("openai", "geo_point", "A point given as [longitude, latitude].",
     O("point", point=T(N(min=-180, max=180), N(min=-90, max=90), min=2), label=S()))
