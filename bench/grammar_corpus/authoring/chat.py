"""Messaging, email, support desks and CRMs: Slack, Discord, Twilio, SendGrid, Zendesk, HubSpot..."""
from dsl import *

SLACK_CHANNEL = S("Channel, private group or IM channel id.", pat="^[CDG][A-Z0-9]{8,12}$")
SLACK_TEXT = O("type text", type=E("plain_text", "mrkdwn"), text=S(max=3000), emoji=B(), verbatim=B())
SLACK_ELEMENT = O("type", type=E("button", "static_select", "datepicker", "overflow", "image", "users_select", "checkboxes"),
                  text=R("text"), action_id=S(max=255), value=S(max=2000), url=URL(), style=E("primary", "danger"),
                  image_url=URL(), alt_text=S(), initial_date=DATE(), placeholder=R("text"),
                  options=A(O("text value", text=R("text"), value=S(max=150)), max=100))
SLACK_BLOCK = O("type", type=E("section", "divider", "header", "context", "actions", "image", "input", "rich_text"),
                block_id=S(max=255), text=R("text"), fields=A(R("text"), max=10), accessory=R("element"),
                elements=A(ANY(R("element"), R("text")), max=25), image_url=URL(), alt_text=S(max=2000),
                title=R("text"), label=R("text"), optional=B())
SLACK_DEFS = {"text": SLACK_TEXT, "element": SLACK_ELEMENT, "block": SLACK_BLOCK}

schema("slack_message", O(
    "channel", channel=SLACK_CHANNEL, text=S("Fallback text; required when blocks are absent.", max=40000),
    blocks=A(R("block"), max=50), thread_ts=S("Timestamp of the parent message.", pat="^[0-9]+\\.[0-9]{6}$"),
    reply_broadcast=B(), mrkdwn=B(default=True), unfurl_links=B(), unfurl_media=B(),
    username=S(), icon_emoji=S(pat="^:[a-z0-9_+-]+:$"), icon_url=URL(),
    attachments=A(O("", fallback=S(), color=S(pat="^(good|warning|danger|#[0-9a-fA-F]{6})$"), pretext=S(), title=S(),
                    title_link=URL(), text=S(), footer=S(), ts=I(min=0),
                    fields=A(O("title value", title=S(), value=S(), short=B()))), max=20),
    metadata=O("event_type event_payload", event_type=S(), event_payload=MAP(TYPES("string", "number", "boolean")))),
    title="Slack chat.postMessage", defs=SLACK_DEFS)

schema("slack_block_kit_modal", O(
    "type title blocks", type=C("modal"), title=R("text"), submit=R("text"), close=R("text"),
    blocks=A(R("block"), min=1, max=100), private_metadata=S(max=3000), callback_id=S(max=255),
    clear_on_close=B(), notify_on_close=B(), external_id=S()),
    title="Slack modal view", defs=SLACK_DEFS)

schema("slack_conversation_create", O(
    "name", name=S(pat="^[a-z0-9_-]{1,80}$"), is_private=B(default=False), team_id=S(pat="^T[A-Z0-9]+$")),
    title="Slack conversations.create")

schema("slack_user_profile", O(
    "", display_name=S(max=80), real_name=S(), title=S(), phone=S(), email=EMAIL(), status_text=S(max=100),
    status_emoji=S(pat="^:[a-z0-9_+-]+:$"), status_expiration=I(min=0), pronouns=S(),
    fields=MAP(O("value", value=S(), alt=S()))), title="Slack users.profile.set profile")

schema("slack_event_app_mention", O(
    "token team_id api_app_id event type event_id event_time",
    token=S(), team_id=S(), api_app_id=S(), type=C("event_callback"), event_id=S(pat="^Ev[A-Z0-9]+$"),
    event_time=I(min=0), authorizations=A(O("team_id user_id is_bot", team_id=S(), user_id=S(), is_bot=B())),
    event=O("type user text ts channel", type=C("app_mention"), user=S(), text=S(), ts=S(), channel=SLACK_CHANNEL,
            event_ts=S(), thread_ts=S())),
    title="Slack app_mention event")

EMBED = O("", title=S(max=256), type=C("rich"), description=S(max=4096), url=URL(), timestamp=TS(),
          color=I(min=0, max=16777215), footer=O("text", text=S(max=2048), icon_url=URL()),
          image=O("url", url=URL()), thumbnail=O("url", url=URL()),
          author=O("name", name=S(max=256), url=URL(), icon_url=URL()),
          fields=A(O("name value", name=S(max=256), value=S(max=1024), inline=B()), max=25))

schema("discord_message_create", O(
    "", content=S(max=2000), tts=B(), embeds=A(R("embed"), max=10), sticker_ids=A(S(pat="^[0-9]{17,20}$"), max=3),
    allowed_mentions=O("", parse=A(E("roles", "users", "everyone")), roles=A(S()), users=A(S()), replied_user=B()),
    message_reference=O("message_id", message_id=S(pat="^[0-9]{17,20}$"), channel_id=S(), guild_id=S(), fail_if_not_exists=B()),
    components=A(O("type components", type=C(1), components=A(O("type", type=I(min=2, max=8), style=I(min=1, max=5), label=S(max=80),
                                                                 custom_id=S(max=100), url=URL(), disabled=B()), max=5)), max=5),
    flags=I(min=0)),
    title="Discord create message", defs={"embed": EMBED})

schema("discord_webhook_execute", O(
    "", content=S(max=2000), username=S(max=80), avatar_url=URL(), tts=B(), embeds=A(R("embed"), max=10),
    thread_name=S(max=100)), title="Discord execute webhook", defs={"embed": EMBED})

schema("discord_slash_command", O(
    "name description", name=S(pat="^[-_a-z0-9]{1,32}$"), description=S(min=1, max=100), type=I(min=1, max=3, default=1),
    options=A(R("option"), max=25), default_member_permissions=OPT(S(pat="^[0-9]+$")), dm_permission=B(), nsfw=B()),
    title="Discord application command",
    defs={"option": O("type name description", type=I(min=1, max=11), name=S(pat="^[-_a-z0-9]{1,32}$"), description=S(max=100),
                      required=B(), choices=A(O("name value", name=S(max=100), value=TYPES("string", "integer", "number")), max=25),
                      options=A(R("option"), max=25), min_value=N(), max_value=N(), autocomplete=B())})

schema("telegram_send_message", O(
    "chat_id text", chat_id=ANY(I(), S(pat="^@[A-Za-z0-9_]{5,32}$")), text=S(min=1, max=4096),
    parse_mode=E("MarkdownV2", "HTML", "Markdown"), disable_notification=B(), protect_content=B(),
    reply_parameters=O("message_id", message_id=I(min=1), chat_id=ANY(I(), S())),
    reply_markup=O("", inline_keyboard=A(A(O("text", text=S(), url=URL(), callback_data=S(max=64))))),
    message_thread_id=I(min=1)), title="Telegram sendMessage")

schema("whatsapp_cloud_message", O(
    "messaging_product to type", messaging_product=C("whatsapp"), recipient_type=C("individual"),
    to=S("Phone number in E.164 without +.", pat="^[1-9][0-9]{6,14}$"), type=E("text", "template", "image", "location", "interactive"),
    text=O("body", body=S(max=4096), preview_url=B()),
    template=O("name language", name=S(), language=O("code", code=S(pat="^[a-z]{2}(_[A-Z]{2})?$")),
               components=A(O("type", type=E("header", "body", "button"), parameters=A(O("type", type=E("text", "currency", "date_time", "image"), text=S()))))),
    image=O("", id=S(), link=URL(), caption=S()),
    location=O("latitude longitude", latitude=N(min=-90, max=90), longitude=N(min=-180, max=180), name=S(), address=S())),
    title="WhatsApp Cloud API message")

schema("twilio_message", O(
    "To", To=S("Destination phone number in E.164.", pat="^\\+[1-9][0-9]{7,14}$"),
    From=S(pat="^\\+[1-9][0-9]{7,14}$"), MessagingServiceSid=S(pat="^MG[0-9a-f]{32}$"), Body=S(max=1600),
    MediaUrl=A(URL(), max=10), StatusCallback=URL(), ValidityPeriod=I(min=1, max=36000), SendAt=TS(),
    ScheduleType=C("fixed"), ShortenUrls=B()), title="Twilio create message")

schema("twilio_message_resource", O(
    "sid account_sid to status", sid=S(pat="^(SM|MM)[0-9a-f]{32}$"), account_sid=S(pat="^AC[0-9a-f]{32}$"),
    to=S(), from_=S(), body=S(), num_segments=S(pat="^[0-9]+$"), num_media=S(pat="^[0-9]+$"),
    status=E("queued", "sending", "sent", "failed", "delivered", "undelivered", "receiving", "received", "accepted", "scheduled", "read", "canceled"),
    direction=E("inbound", "outbound-api", "outbound-call", "outbound-reply"), price=OPT(S()), price_unit=CURRENCY(),
    error_code=OPT(I()), error_message=OPT(S()), date_created=S(), date_sent=OPT(S()), uri=S()),
    title="Twilio message resource")

schema("twilio_call_create", O(
    "To From", To=S(), From=S(), Url=URL(), Twiml=S(max=4000), Method=E("GET", "POST"), StatusCallback=URL(),
    StatusCallbackEvent=A(E("initiated", "ringing", "answered", "completed")), Timeout=I(min=5, max=600, default=60),
    Record=B(), MachineDetection=E("Enable", "DetectMessageEnd")), title="Twilio create call")

schema("sendgrid_mail_send", O(
    "personalizations from", personalizations=A(O("to", to=A(R("email"), min=1, max=1000), cc=A(R("email")), bcc=A(R("email")),
                                                  subject=S(), dynamic_template_data=MAP(TYPES("string", "number", "boolean")),
                                                  send_at=I(min=0)), min=1, max=1000),
    from_=R("email"), reply_to=R("email"), subject=S(min=1),
    content=A(O("type value", type=S(pat="^[a-z]+/[a-z0-9.+-]+$"), value=S(min=1)), min=1),
    attachments=A(O("content filename", content=S("Base64 content."), type=S(), filename=S(), disposition=E("inline", "attachment"), content_id=S())),
    template_id=S(pat="^d-[0-9a-f]{32}$"), categories=A(S(max=255), max=10), send_at=I(min=0),
    asm=O("group_id", group_id=I(min=1), groups_to_display=A(I(), max=25)),
    tracking_settings=O("", click_tracking=O("", enable=B(), enable_text=B()), open_tracking=O("", enable=B()))),
    title="SendGrid v3 mail send", defs={"email": O("email", email=EMAIL(), name=S())})

schema("mailchimp_list_member", O(
    "email_address status", email_address=EMAIL(), email_type=E("html", "text"),
    status=E("subscribed", "unsubscribed", "cleaned", "pending", "transactional"), merge_fields=MAP(TYPES("string", "number")),
    interests=MAP(B()), language=S(), vip=B(), location=O("", latitude=N(min=-90, max=90), longitude=N(min=-180, max=180)),
    tags=A(S()), ip_signup=S(fmt="ipv4"), timestamp_signup=TS()), title="Mailchimp add list member")

schema("mailgun_send", O(
    "from to subject", from_=S(), to=A(EMAIL(), min=1), cc=A(EMAIL()), bcc=A(EMAIL()), subject=S(), text=S(), html=S(),
    template=S(), o_tag=A(S(), max=3), o_deliverytime=S(), h_reply_to=EMAIL()), title="Mailgun send message (form fields as JSON)")

schema("postmark_email", O(
    "From To", From=S(), To=S(), Cc=S(), Bcc=S(), Subject=S(), Tag=S(max=1000), HtmlBody=S(), TextBody=S(),
    ReplyTo=S(), Headers=A(O("Name Value", Name=S(), Value=S())), TrackOpens=B(), TrackLinks=E("None", "HtmlAndText", "HtmlOnly", "TextOnly"),
    Metadata=MAP(S()), MessageStream=S()), title="Postmark send email")

schema("zoom_meeting_create", O(
    "topic type", topic=S(max=200), type=I("1 instant, 2 scheduled, 3 recurring no fixed time, 8 recurring fixed time.", min=1, max=8),
    start_time=TS(), duration=I(min=1, max=1440), timezone=S(), password=S(max=10, pat="^[A-Za-z0-9@_*-]*$"), agenda=S(max=2000),
    recurrence=O("type", type=I(min=1, max=3), repeat_interval=I(min=1, max=90), weekly_days=S(pat="^[1-7](,[1-7])*$"),
                 end_times=I(min=1, max=60), end_date_time=TS()),
    settings=O("", host_video=B(), participant_video=B(), join_before_host=B(), mute_upon_entry=B(), waiting_room=B(),
               approval_type=I(min=0, max=2), audio=E("both", "telephony", "voip"), auto_recording=E("local", "cloud", "none"),
               alternative_hosts=S())),
    title="Zoom create meeting")

schema("msteams_adaptive_card", O(
    "type version body", type=C("AdaptiveCard"), version=E("1.2", "1.3", "1.4", "1.5"), body=A(R("element"), min=1),
    actions=A(O("type title", type=E("Action.OpenUrl", "Action.Submit", "Action.ShowCard"), title=S(), url=URL(), data=MAP(S()))),
    msteams=O("", width=E("Full"))),
    title="Adaptive Card for Microsoft Teams",
    defs={"element": O("type", type=E("TextBlock", "Image", "ColumnSet", "Column", "Container", "FactSet", "Input.Text"),
                       text=S(), size=E("Small", "Default", "Medium", "Large", "ExtraLarge"), weight=E("Lighter", "Default", "Bolder"),
                       wrap=B(), url=URL(), id=S(), placeholder=S(), facts=A(O("title value", title=S(), value=S())),
                       items=A(R("element")), columns=A(R("element")), width=ANY(S(), I(min=1)))})

schema("zendesk_ticket_create", O(
    "ticket", ticket=O("subject comment", subject=S(), comment=O("body", body=S(), html_body=S(), public=B(), author_id=I(min=1)),
                       priority=E("urgent", "high", "normal", "low"), type=E("problem", "incident", "question", "task"),
                       status=E("new", "open", "pending", "hold", "solved", "closed"), requester=O("name email", name=S(), email=EMAIL()),
                       assignee_id=I(min=1), group_id=I(min=1), tags=A(S(pat="^[a-z0-9_]+$")), due_at=TS(),
                       custom_fields=A(O("id value", id=I(min=1), value=TYPES("string", "number", "boolean", "null"))),
                       external_id=S())),
    title="Zendesk create ticket")

schema("freshdesk_ticket", O(
    "subject description email priority status", name=S(), email=EMAIL(), phone=S(), subject=S(), description=S(),
    type=S(), status=I("2 open, 3 pending, 4 resolved, 5 closed.", min=2, max=5), priority=I("1 low to 4 urgent.", min=1, max=4),
    source=I(min=1, max=10), tags=A(S()), cc_emails=A(EMAIL()), due_by=TS(), fr_due_by=TS(), group_id=I(min=1),
    custom_fields=MAP(TYPES("string", "number", "boolean"))), title="Freshdesk create ticket")

schema("intercom_conversation_reply", O(
    "message_type type body", message_type=E("comment", "note", "quick_reply"), type=E("admin", "user"),
    admin_id=S(pat="^[0-9]+$"), intercom_user_id=S(), body=S(), attachment_urls=A(URL(), max=10),
    created_at=I(min=0)), title="Intercom reply to conversation")

schema("hubspot_contact_create", O(
    "properties", properties=O("email", email=EMAIL(), firstname=S(), lastname=S(), phone=S(), company=S(), website=URL(),
                               lifecyclestage=E("subscriber", "lead", "marketingqualifiedlead", "salesqualifiedlead", "opportunity", "customer", "evangelist", "other"),
                               hs_lead_status=E("NEW", "OPEN", "IN_PROGRESS", "OPEN_DEAL", "UNQUALIFIED", "ATTEMPTED_TO_CONTACT", "CONNECTED", "BAD_TIMING"),
                               jobtitle=S(), city=S(), country=S(), addl=S()),
    associations=A(O("to types", to=O("id", id=S(pat="^[0-9]+$")),
                     types=A(O("associationCategory associationTypeId", associationCategory=E("HUBSPOT_DEFINED", "USER_DEFINED", "INTEGRATOR_DEFINED"),
                               associationTypeId=I(min=1)), min=1)))),
    title="HubSpot create contact")

schema("hubspot_deal", O(
    "id properties createdAt updatedAt archived", id=S(pat="^[0-9]+$"),
    properties=O("dealname", dealname=S(), amount=S(pat="^[0-9]+(\\.[0-9]{1,2})?$"), dealstage=S(), pipeline=S(), closedate=TS(),
                 hubspot_owner_id=S(), addl=OPT(S())),
    createdAt=TS(), updatedAt=TS(), archived=B()), title="HubSpot deal object")

schema("salesforce_lead", O(
    "LastName Company", FirstName=S(max=40), LastName=S(max=80), Company=S(max=255), Title=S(max=128), Email=EMAIL(),
    Phone=S(max=40), MobilePhone=S(max=40), Website=URL(), LeadSource=E("Web", "Phone Inquiry", "Partner Referral", "Purchased List", "Other"),
    Status=E("Open - Not Contacted", "Working - Contacted", "Closed - Converted", "Closed - Not Converted"),
    Industry=S(), Rating=E("Hot", "Warm", "Cold"), AnnualRevenue=N(min=0), NumberOfEmployees=I(min=0),
    Street=S(), City=S(), State=S(), PostalCode=S(), Country=S(), Description=S(max=32000), HasOptedOutOfEmail=B()),
    title="Salesforce Lead sObject")

schema("salesforce_opportunity", O(
    "Name StageName CloseDate", Name=S(max=120), AccountId=S(pat="^001[A-Za-z0-9]{12}([A-Za-z0-9]{3})?$"),
    Amount=N(min=0), CloseDate=DATE(), StageName=E("Prospecting", "Qualification", "Needs Analysis", "Value Proposition", "Proposal/Price Quote", "Negotiation/Review", "Closed Won", "Closed Lost"),
    Probability=N(min=0, max=100), Type=E("New Customer", "Existing Customer - Upgrade", "Existing Customer - Replacement"),
    NextStep=S(max=255), LeadSource=S(), ForecastCategoryName=E("Omitted", "Pipeline", "Best Case", "Commit", "Closed")),
    title="Salesforce Opportunity sObject")

schema("pipedrive_person", O(
    "name", name=S(), owner_id=I(min=1), org_id=I(min=1),
    email=A(O("value", value=EMAIL(), primary=B(), label=E("work", "home", "other"))),
    phone=A(O("value", value=S(), primary=B(), label=E("work", "home", "mobile", "other"))),
    visible_to=E("1", "3", "5", "7"), marketing_status=E("no_consent", "unsubscribed", "subscribed", "archived")),
    title="Pipedrive add person")

schema("calendly_invitee_created", O(
    "event payload", event=C("invitee.created"), created_at=TS(),
    payload=O("email name status uri", email=EMAIL(), name=S(), status=E("active", "canceled"), uri=URL(), timezone=S(),
              questions_and_answers=A(O("question answer position", question=S(), answer=S(), position=I(min=0))),
              scheduled_event=O("uri start_time end_time", uri=URL(), name=S(), start_time=TS(), end_time=TS(),
                                location=O("type", type=E("physical", "zoom", "google_conference", "outbound_call", "custom"), location=S(), join_url=URL())),
              rescheduled=B(), cancel_url=URL(), reschedule_url=URL())),
    title="Calendly invitee.created webhook")

schema("typeform_response", O(
    "form_id token submitted_at answers", form_id=S(), token=S(), landed_at=TS(), submitted_at=TS(),
    answers=A(O("type field", type=E("text", "email", "number", "boolean", "choice", "choices", "date", "url", "phone_number"),
                field=O("id type ref", id=S(), type=S(), ref=S()), text=S(), email=EMAIL(), number=N(), boolean=B(),
                choice=O("label", label=S(), other=S()), choices=O("labels", labels=A(S())), date=DATE(), url=URL(), phone_number=S())),
    hidden=MAP(S()), calculated=O("score", score=I())), title="Typeform response")

schema("discourse_topic_create", O(
    "title raw", title=S(min=15, max=255), raw=S(min=20), category=I(min=1), tags=A(S(pat="^[a-z0-9-]+$"), max=5),
    created_at=TS(), embed_url=URL(), external_id=S()), title="Discourse create topic")

# Comment threads are recursive: replies hold comments.
schema("reddit_comment_tree", O(
    "post_id comments", post_id=S(pat="^t3_[a-z0-9]+$"), sort=E("confidence", "top", "new", "controversial", "old", "qa"),
    comments=A(R("comment"))),
    title="Reddit comment tree",
    defs={"comment": O("id author body score created_utc replies", id=S(pat="^t1_[a-z0-9]+$"), author=S(), body=S(),
                       score=I(), created_utc=I(min=0), edited=ANY(B(), I(min=0)), stickied=B(), distinguished=OPT(E("moderator", "admin")),
                       replies=A(R("comment")))})

schema("hackernews_item", O(
    "id type by time", id=I(min=1), deleted=B(), type=E("job", "story", "comment", "poll", "pollopt"), by=S(), time=I(min=0),
    text=S(), dead=B(), parent=I(min=1), poll=I(min=1), kids=A(I(min=1)), url=URL(), score=I(min=0), title=S(),
    parts=A(I(min=1)), descendants=I(min=0)), title="Hacker News item")

schema("mastodon_status_create", O(
    "status", status=S(max=500), media_ids=A(S(), max=4), in_reply_to_id=S(), sensitive=B(), spoiler_text=S(),
    visibility=E("public", "unlisted", "private", "direct"), language=S(pat="^[a-z]{2}$"), scheduled_at=TS(),
    poll=O("options expires_in", options=A(S(max=50), min=2, max=4), expires_in=I(min=300, max=2629746), multiple=B(), hide_totals=B())),
    title="Mastodon post status")

schema("twitter_tweet_create", O(
    "", text=S(max=280), reply=O("in_reply_to_tweet_id", in_reply_to_tweet_id=S(pat="^[0-9]{1,19}$"), exclude_reply_user_ids=A(S())),
    quote_tweet_id=S(pat="^[0-9]{1,19}$"), media=O("media_ids", media_ids=A(S(pat="^[0-9]{1,19}$"), min=1, max=4), tagged_user_ids=A(S(), max=10)),
    poll=O("options duration_minutes", options=A(S(min=1, max=25), min=2, max=4), duration_minutes=I(min=5, max=10080)),
    reply_settings=E("following", "mentionedUsers", "subscribers"), for_super_followers_only=B()),
    title="X (Twitter) create post")

schema("notion_page_create", O(
    "parent properties", parent=ANY(O("database_id", database_id=UUID()), O("page_id", page_id=UUID())),
    icon=O("type", type=E("emoji", "external"), emoji=S(max=8), external=O("url", url=URL())),
    cover=O("type external", type=C("external"), external=O("url", url=URL())),
    properties=MAP(O("", title=A(R("rich_text")), rich_text=A(R("rich_text")), number=OPT(N()), checkbox=B(), url=OPT(URL()),
                     select=OPT(O("name", name=S(max=100))), multi_select=A(O("name", name=S())), date=OPT(O("start", start=S(), end=OPT(S()))),
                     email=OPT(EMAIL()), people=A(O("id", id=UUID())))),
    children=A(R("block"), max=100)),
    title="Notion create page",
    defs={"rich_text": O("type", type=E("text", "mention", "equation"), text=O("content", content=S(max=2000), link=OPT(O("url", url=URL()))),
                         annotations=O("", bold=B(), italic=B(), strikethrough=B(), underline=B(), code=B(),
                                       color=E("default", "gray", "brown", "orange", "yellow", "green", "blue", "purple", "pink", "red")),
                         plain_text=S(), href=OPT(URL())),
          "block": O("object type", object=C("block"),
                     type=E("paragraph", "heading_1", "heading_2", "heading_3", "bulleted_list_item", "numbered_list_item", "to_do", "toggle", "code", "quote", "divider"),
                     paragraph=O("rich_text", rich_text=A(R("rich_text")), children=A(R("block"))),
                     to_do=O("rich_text", rich_text=A(R("rich_text")), checked=B()),
                     code=O("rich_text language", rich_text=A(R("rich_text")), language=S()),
                     bulleted_list_item=O("rich_text", rich_text=A(R("rich_text")), children=A(R("block"))))})

schema("asana_task_create", O(
    "data", data=O("name", name=S(), notes=S(), html_notes=S(), assignee=S(), projects=A(S(pat="^[0-9]+$")), workspace=S(pat="^[0-9]+$"),
                   due_on=DATE(), due_at=TS(), start_on=DATE(), completed=B(), followers=A(S()), parent=S(), tags=A(S()),
                   resource_subtype=E("default_task", "milestone", "section", "approval"), custom_fields=MAP(TYPES("string", "number")))),
    title="Asana create task")

schema("trello_card_create", O(
    "idList", name=S(max=16384), desc=S(max=16384), pos=ANY(E("top", "bottom"), N(min=0)), due=TS(), start=TS(),
    dueComplete=B(), idList=S(pat="^[0-9a-fA-F]{24}$"), idMembers=A(S(pat="^[0-9a-fA-F]{24}$")), idLabels=A(S(pat="^[0-9a-fA-F]{24}$")),
    urlSource=URL(), idCardSource=S(), address=S(), locationName=S(), coordinates=S(pat="^-?[0-9]+(\\.[0-9]+)?,-?[0-9]+(\\.[0-9]+)?$")),
    title="Trello create card")

schema("clickup_task_create", O(
    "name", name=S(), description=S(), markdown_description=S(), assignees=A(I(min=1)), tags=A(S()), status=S(),
    priority=OPT(I(min=1, max=4)), due_date=I(min=0), due_date_time=B(), time_estimate=I(min=0), start_date=I(min=0),
    notify_all=B(), parent=OPT(S()), links_to=OPT(S()),
    custom_fields=A(O("id value", id=UUID(), value=TYPES("string", "number", "boolean", "array")))),
    title="ClickUp create task")

schema("monday_item_create", O(
    "board_id item_name", board_id=I(min=1), group_id=S(), item_name=S(max=255),
    column_values=MAP(ANY(S(), O("", label=S(), index=I(min=0), date=DATE(), time=S(pat="^[0-9]{2}:[0-9]{2}:[0-9]{2}$"), text=S(), email=EMAIL()))),
    create_labels_if_missing=B()), title="monday.com create_item variables")
