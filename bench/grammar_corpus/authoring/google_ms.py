"""Google, Microsoft Graph, Apple, Dropbox, Box, Spotify and other consumer platform APIs."""
from dsl import *

G_DATETIME = O("", date=DATE(), dateTime=TS(), timeZone=S(examples=["Europe/Zurich"]))
ATTENDEE = O("email", email=EMAIL(), displayName=S(), optional=B(), resource=B(),
             responseStatus=E("needsAction", "declined", "tentative", "accepted"), comment=S(), additionalGuests=I(min=0))

schema("google_calendar_event", O(
    "start end", summary=S(), description=S(), location=S(), colorId=S(pat="^([1-9]|1[01])$"),
    start=G_DATETIME, end=G_DATETIME, recurrence=A(S(pat="^(RRULE|EXRULE|RDATE|EXDATE):.+$")),
    attendees=A(ATTENDEE, max=100), guestsCanModify=B(), guestsCanInviteOthers=B(), guestsCanSeeOtherGuests=B(),
    transparency=E("opaque", "transparent"), visibility=E("default", "public", "private", "confidential"),
    status=E("confirmed", "tentative", "cancelled"), eventType=E("default", "outOfOffice", "focusTime", "workingLocation"),
    reminders=O("useDefault", useDefault=B(), overrides=A(O("method minutes", method=E("email", "popup"), minutes=I(min=0, max=40320)), max=5)),
    conferenceData=O("", createRequest=O("requestId", requestId=S(), conferenceSolutionKey=O("type", type=E("hangoutsMeet", "eventHangout", "eventNamedHangout", "addOn"))),
                     entryPoints=A(O("entryPointType uri", entryPointType=E("video", "phone", "sip", "more"), uri=S(), label=S(), pin=S()))),
    attachments=A(O("fileUrl", fileUrl=URL(), title=S(), mimeType=S(), iconLink=URL(), fileId=S()), max=25),
    extendedProperties=O("", private=MAP(S()), shared=MAP(S())), source=O("url title", url=URL(), title=S())),
    title="Google Calendar event (events.insert body)")

schema("google_calendar_freebusy", O(
    "timeMin timeMax items", timeMin=TS(), timeMax=TS(), timeZone=S(), groupExpansionMax=I(min=1, max=100),
    calendarExpansionMax=I(min=1, max=50), items=A(O("id", id=S()), min=1)), title="Google Calendar freebusy query")

schema("gmail_send_message", O(
    "raw", raw=S("The entire email message in RFC 2822 form, base64url-encoded.", pat="^[A-Za-z0-9_-]+=*$"), threadId=S(),
    labelIds=A(S())), title="Gmail users.messages.send")

schema("gmail_filter", O(
    "criteria action", criteria=O("", from_=S(), to=S(), subject=S(), query=S(), negatedQuery=S(), hasAttachment=B(), excludeChats=B(),
                                  size=I(min=0), sizeComparison=E("unspecified", "smaller", "larger")),
    action=O("", addLabelIds=A(S()), removeLabelIds=A(S()), forward=EMAIL())), title="Gmail filter")

schema("google_drive_file", O(
    "name", name=S(), mimeType=S(examples=["application/vnd.google-apps.folder"]), description=S(), starred=B(), parents=A(S(), max=1),
    properties=MAP(S()), appProperties=MAP(S()), writersCanShare=B(), copyRequiresWriterPermission=B(),
    contentHints=O("", indexableText=S(max=131072), thumbnail=O("image mimeType", image=S(), mimeType=S())),
    folderColorRgb=S(pat="^#[0-9a-fA-F]{6}$"), modifiedTime=TS(), viewedByMeTime=TS()),
    title="Google Drive file metadata")

schema("google_drive_permission", O(
    "role type", role=E("owner", "organizer", "fileOrganizer", "writer", "commenter", "reader"), type=E("user", "group", "domain", "anyone"),
    emailAddress=EMAIL(), domain=S(fmt="hostname"), allowFileDiscovery=B(), expirationTime=TS(), view=C("published")),
    title="Google Drive create permission")

schema("google_sheets_values_update", O(
    "range values", range=S(pat="^([A-Za-z0-9 _']+!)?[A-Z]+[0-9]*(:[A-Z]+[0-9]*)?$"), majorDimension=E("ROWS", "COLUMNS"),
    values=A(A(TYPES("string", "number", "boolean"))),
    ), title="Google Sheets ValueRange")

schema("google_sheets_batch_update", O(
    "requests", requests=A(O("", addSheet=O("properties", properties=O("title", title=S(), index=I(min=0), sheetType=E("GRID", "OBJECT"),
                                                                        gridProperties=O("", rowCount=I(min=1), columnCount=I(min=1), frozenRowCount=I(min=0)))),
                               deleteSheet=O("sheetId", sheetId=I(min=0)),
                               updateCells=O("range fields", range=R("grid_range"), fields=S(),
                                             rows=A(O("values", values=A(O("", userEnteredValue=O("", stringValue=S(), numberValue=N(), boolValue=B(), formulaValue=S(pat="^=.*$"))))))),
                               repeatCell=O("range cell fields", range=R("grid_range"), fields=S(),
                                            cell=O("", userEnteredFormat=O("", backgroundColor=O("", red=N(min=0, max=1), green=N(min=0, max=1), blue=N(min=0, max=1)),
                                                                           horizontalAlignment=E("LEFT", "CENTER", "RIGHT"),
                                                                           textFormat=O("", bold=B(), italic=B(), fontSize=I(min=1)))))), min=1),
    includeSpreadsheetInResponse=B()),
    title="Google Sheets spreadsheets.batchUpdate",
    defs={"grid_range": O("sheetId", sheetId=I(min=0), startRowIndex=I(min=0), endRowIndex=I(min=0), startColumnIndex=I(min=0), endColumnIndex=I(min=0))})

schema("google_maps_geocode_result", O(
    "results status", status=E("OK", "ZERO_RESULTS", "OVER_DAILY_LIMIT", "OVER_QUERY_LIMIT", "REQUEST_DENIED", "INVALID_REQUEST", "UNKNOWN_ERROR"),
    results=A(O("formatted_address geometry place_id types", formatted_address=S(), place_id=S(), types=A(S()),
                address_components=A(O("long_name short_name types", long_name=S(), short_name=S(), types=A(S()))),
                geometry=O("location location_type", location=R("latlng"), location_type=E("ROOFTOP", "RANGE_INTERPOLATED", "GEOMETRIC_CENTER", "APPROXIMATE"),
                           viewport=O("northeast southwest", northeast=R("latlng"), southwest=R("latlng"))),
                partial_match=B(), plus_code=O("global_code", global_code=S(), compound_code=S()))),
    error_message=S()),
    title="Google Maps Geocoding API response", defs={"latlng": O("lat lng", lat=N(min=-90, max=90), lng=N(min=-180, max=180))})

schema("google_places_text_search", O(
    "textQuery", textQuery=S(min=1), includedType=S(pat="^[a-z_]+$"), languageCode=S(pat="^[a-z]{2}(-[A-Z]{2})?$"), maxResultCount=I(min=1, max=20),
    minRating=N(min=0, max=5), openNow=B(), priceLevels=A(E("PRICE_LEVEL_INEXPENSIVE", "PRICE_LEVEL_MODERATE", "PRICE_LEVEL_EXPENSIVE", "PRICE_LEVEL_VERY_EXPENSIVE")),
    rankPreference=E("RELEVANCE", "DISTANCE"), regionCode=COUNTRY(),
    locationBias=O("circle", circle=O("center radius", center=O("latitude longitude", latitude=N(min=-90, max=90), longitude=N(min=-180, max=180)), radius=N(min=0, max=50000)))),
    title="Google Places API (New) searchText")

schema("google_routes_compute", O(
    "origin destination", origin=R("waypoint"), destination=R("waypoint"), intermediates=A(R("waypoint"), max=25),
    travelMode=E("DRIVE", "BICYCLE", "WALK", "TWO_WHEELER", "TRANSIT"), routingPreference=E("TRAFFIC_UNAWARE", "TRAFFIC_AWARE", "TRAFFIC_AWARE_OPTIMAL"),
    departureTime=TS(), computeAlternativeRoutes=B(), routeModifiers=O("", avoidTolls=B(), avoidHighways=B(), avoidFerries=B()),
    languageCode=S(), units=E("METRIC", "IMPERIAL")),
    title="Google Routes API computeRoutes",
    defs={"waypoint": O("", address=S(), placeId=S(), location=O("latLng", latLng=O("latitude longitude", latitude=N(min=-90, max=90), longitude=N(min=-180, max=180))),
                        via=B())})

schema("youtube_video_insert", O(
    "snippet status", snippet=O("title", title=S(max=100), description=S(max=5000), tags=A(S()), categoryId=S(pat="^[0-9]+$"),
                                defaultLanguage=S(), defaultAudioLanguage=S()),
    status=O("privacyStatus", privacyStatus=E("private", "public", "unlisted"), embeddable=B(), license=E("youtube", "creativeCommon"),
             publicStatsViewable=B(), publishAt=TS(), selfDeclaredMadeForKids=B(), containsSyntheticMedia=B()),
    recordingDetails=O("", recordingDate=TS())),
    title="YouTube Data API videos.insert resource")

schema("youtube_search_result", O(
    "kind etag items", kind=C("youtube#searchListResponse"), etag=S(), nextPageToken=S(), regionCode=COUNTRY(),
    pageInfo=O("totalResults resultsPerPage", totalResults=I(min=0), resultsPerPage=I(min=0)),
    items=A(O("kind id snippet", kind=C("youtube#searchResult"), etag=S(),
              id=O("kind", kind=E("youtube#video", "youtube#channel", "youtube#playlist"), videoId=S(pat="^[A-Za-z0-9_-]{11}$"), channelId=S(), playlistId=S()),
              snippet=O("publishedAt channelId title", publishedAt=TS(), channelId=S(), title=S(), description=S(), channelTitle=S(),
                        liveBroadcastContent=E("none", "upcoming", "live"),
                        thumbnails=MAP(O("url", url=URL(), width=I(min=1), height=I(min=1))))))),
    title="YouTube search.list response")

schema("ga4_measurement_event", O(
    "client_id events", client_id=S(), user_id=S(), timestamp_micros=I(min=0), non_personalized_ads=B(),
    user_properties=MAP(O("value", value=TYPES("string", "number"))),
    events=A(O("name", name=S(pat="^[a-zA-Z][a-zA-Z0-9_]{0,39}$"), params=MAP(TYPES("string", "number", "boolean", "array"))), min=1, max=25)),
    title="GA4 Measurement Protocol payload")

schema("google_docs_batch_update", O(
    "requests", requests=A(O("", insertText=O("text", text=S(), location=O("index", index=I(min=1), segmentId=S()), endOfSegmentLocation=O("", segmentId=S())),
                               replaceAllText=O("containsText replaceText", containsText=O("text", text=S(), matchCase=B()), replaceText=S()),
                               updateTextStyle=O("range textStyle fields", range=O("startIndex endIndex", startIndex=I(min=0), endIndex=I(min=0)),
                                                 textStyle=O("", bold=B(), italic=B(), underline=B(), link=O("url", url=URL())), fields=S()),
                               createParagraphBullets=O("range bulletPreset", range=O("startIndex endIndex", startIndex=I(min=0), endIndex=I(min=0)),
                                                        bulletPreset=E("BULLET_DISC_CIRCLE_SQUARE", "NUMBERED_DECIMAL_ALPHA_ROMAN", "BULLET_CHECKBOX"))), min=1),
    writeControl=O("", requiredRevisionId=S(), targetRevisionId=S())),
    title="Google Docs documents.batchUpdate")

schema("google_tasks_task", O(
    "title", title=S(max=1024), notes=S(max=8192), status=E("needsAction", "completed"), due=TS(), completed=TS(), parent=S(), position=S()),
    title="Google Tasks task")

schema("google_people_contact", O(
    "", names=A(O("", givenName=S(), familyName=S(), middleName=S(), displayName=S())),
    emailAddresses=A(O("value", value=EMAIL(), type=E("home", "work", "other"))),
    phoneNumbers=A(O("value", value=S(), type=E("home", "work", "mobile", "homeFax", "workFax", "pager", "other"))),
    organizations=A(O("", name=S(), title=S(), department=S())), birthdays=A(O("", date=O("", year=I(min=1900, max=2100), month=I(min=1, max=12), day=I(min=1, max=31)))),
    addresses=A(O("", streetAddress=S(), city=S(), region=S(), postalCode=S(), country=S(), type=S())), biographies=A(O("value", value=S()))),
    title="Google People API person")

schema("graph_calendar_event", O(
    "subject start end", subject=S(), body=O("contentType content", contentType=E("text", "html"), content=S()),
    start=O("dateTime timeZone", dateTime=S(pat="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?$"), timeZone=S()),
    end=O("dateTime timeZone", dateTime=S(pat="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]+)?$"), timeZone=S()),
    location=O("", displayName=S(), locationType=E("default", "conferenceRoom", "homeAddress", "businessAddress", "geoCoordinates", "streetAddress", "hotel", "restaurant", "localBusiness", "postalAddress")),
    attendees=A(O("emailAddress type", emailAddress=O("address", address=EMAIL(), name=S()), type=E("required", "optional", "resource"))),
    isOnlineMeeting=B(), onlineMeetingProvider=E("teamsForBusiness", "skypeForBusiness", "skypeForConsumer"),
    allowNewTimeProposals=B(), showAs=E("free", "tentative", "busy", "oof", "workingElsewhere", "unknown"),
    importance=E("low", "normal", "high"), sensitivity=E("normal", "personal", "private", "confidential"), categories=A(S()),
    reminderMinutesBeforeStart=I(min=0), isReminderOn=B(),
    recurrence=O("pattern range", pattern=O("type interval", type=E("daily", "weekly", "absoluteMonthly", "relativeMonthly", "absoluteYearly", "relativeYearly"),
                                            interval=I(min=1), daysOfWeek=A(E("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")), dayOfMonth=I(min=1, max=31)),
                 range=O("type startDate", type=E("endDate", "noEnd", "numbered"), startDate=DATE(), endDate=DATE(), numberOfOccurrences=I(min=1)))),
    title="Microsoft Graph event")

schema("graph_send_mail", O(
    "message", message=O("subject body toRecipients", subject=S(), body=O("contentType content", contentType=E("Text", "HTML"), content=S()),
                         toRecipients=A(R("recipient"), min=1), ccRecipients=A(R("recipient")), bccRecipients=A(R("recipient")),
                         replyTo=A(R("recipient")), importance=E("low", "normal", "high"),
                         attachments=A(O("@odata.type name contentBytes", {"@odata.type": C("#microsoft.graph.fileAttachment")},
                                         name=S(), contentType=S(), contentBytes=S()))),
    saveToSentItems=B(default=True)),
    title="Microsoft Graph sendMail", defs={"recipient": O("emailAddress", emailAddress=O("address", address=EMAIL(), name=S()))})

schema("graph_teams_chat_message", O(
    "body", body=O("content", contentType=E("text", "html"), content=S()), subject=OPT(S()), importance=E("normal", "high", "urgent"),
    mentions=A(O("id mentionText mentioned", id=I(min=0), mentionText=S(), mentioned=O("", user=O("id", id=UUID(), displayName=S())))),
    attachments=A(O("id contentType", id=S(), contentType=S(), contentUrl=OPT(URL()), content=OPT(S()), name=OPT(S())))),
    title="Microsoft Teams chatMessage")

schema("graph_user_create", O(
    "accountEnabled displayName mailNickname userPrincipalName passwordProfile", accountEnabled=B(), displayName=S(max=256),
    mailNickname=S(max=64, pat="^[A-Za-z0-9._-]+$"), userPrincipalName=S(pat="^[^@]+@[^@]+$"), givenName=S(), surname=S(), jobTitle=S(), department=S(),
    usageLocation=COUNTRY(), mobilePhone=S(), officeLocation=S(),
    passwordProfile=O("password", password=S(min=8, max=256), forceChangePasswordNextSignIn=B())),
    title="Microsoft Graph create user")

schema("graph_drive_item_upload_session", O(
    "item", item=O("", {"@microsoft.graph.conflictBehavior": E("rename", "replace", "fail")}, name=S(), description=S(), fileSize=I(min=0)),
    deferCommit=B()), title="OneDrive createUploadSession")

schema("graph_planner_task", O(
    "planId title", planId=S(), bucketId=S(), title=S(max=255), percentComplete=I(min=0, max=100), priority=I(min=0, max=10),
    startDateTime=TS(), dueDateTime=TS(), assignments=MAP(O("@odata.type orderHint", {"@odata.type": C("#microsoft.graph.plannerAssignment")}, orderHint=S())),
    appliedCategories=MAP(B())), title="Microsoft Planner task")

schema("apple_app_store_notification", O(
    "notificationType notificationUUID data version signedDate", notificationType=E("SUBSCRIBED", "DID_RENEW", "DID_FAIL_TO_RENEW", "EXPIRED", "REFUND", "DID_CHANGE_RENEWAL_STATUS", "OFFER_REDEEMED", "CONSUMPTION_REQUEST", "TEST"),
    subtype=E("INITIAL_BUY", "RESUBSCRIBE", "UPGRADE", "DOWNGRADE", "AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED", "VOLUNTARY", "BILLING_RETRY", "PRICE_INCREASE", "GRACE_PERIOD"),
    notificationUUID=UUID(), version=C("2.0"), signedDate=I(min=0),
    data=O("bundleId environment", appAppleId=I(min=1), bundleId=S(pat="^[A-Za-z0-9.-]+$"), bundleVersion=S(), environment=E("Sandbox", "Production"),
           signedTransactionInfo=S(), signedRenewalInfo=S(), status=I(min=1, max=5))),
    title="App Store Server Notifications V2 (decoded)")

schema("apple_push_payload", O(
    "aps", aps=O("", {"alert": ANY(S(), O("", {"title": S(), "subtitle": S(), "body": S(), "launch-image": S(), "loc-key": S(), "loc-args": A(S())})),
                      "badge": I(min=0), "sound": ANY(S(), O("name", critical=I(min=0, max=1), name=S(), volume=N(min=0, max=1))),
                      "thread-id": S(), "category": S(), "content-available": I(min=0, max=1), "mutable-content": I(min=0, max=1),
                      "interruption-level": E("passive", "active", "time-sensitive", "critical"), "relevance-score": N(min=0, max=1)}),
    addl=TYPES("string", "number", "boolean", "object", "array")),
    title="Apple push notification payload")

schema("dropbox_upload_arg", O(
    "path", path=S(pat="^(/.*|ns:[0-9]+(/.*)?|id:.*)$"), mode=E("add", "overwrite", "update"), autorename=B(default=False),
    client_modified=S(pat="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"), mute=B(), strict_conflict=B(), content_hash=S(pat="^[0-9a-f]{64}$")),
    title="Dropbox files/upload argument")

schema("dropbox_shared_link_settings", O(
    "path", path=S(), settings=O("", requested_visibility=E("public", "team_only", "password"), link_password=S(), expires=S(),
                                 audience=E("public", "team", "no_one"), access=E("viewer", "editor"), allow_download=B())),
    title="Dropbox create shared link with settings")

schema("box_folder_create", O(
    "name parent", name=S(min=1, max=255, pat="^[^/\\\\]+$"), parent=O("id", id=S(pat="^[0-9]+$")),
    folder_upload_email=O("", access=E("open", "collaborators")), sync_state=E("synced", "not_synced", "partially_synced")),
    title="Box create folder")

schema("spotify_playlist_create", O(
    "name", name=S(), public=B(default=True), collaborative=B(default=False), description=S(max=300)), title="Spotify create playlist")

schema("spotify_track", O(
    "id name uri duration_ms artists album", id=S(pat="^[0-9A-Za-z]{22}$"), name=S(), uri=S(pat="^spotify:track:[0-9A-Za-z]{22}$"),
    duration_ms=I(min=0), explicit=B(), popularity=I(min=0, max=100), preview_url=OPT(URL()), track_number=I(min=1), disc_number=I(min=1),
    is_local=B(), external_ids=O("", isrc=S(pat="^[A-Z]{2}[A-Z0-9]{3}[0-9]{7}$"), ean=S(), upc=S()),
    artists=A(R("artist"), min=1),
    album=O("id name album_type release_date", id=S(), name=S(), album_type=E("album", "single", "compilation"), total_tracks=I(min=1),
            release_date=S(pat="^[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?$"), release_date_precision=E("year", "month", "day"),
            images=A(O("url height width", url=URL(), height=OPT(I(min=1)), width=OPT(I(min=1)))), artists=A(R("artist")))),
    title="Spotify track object", defs={"artist": O("id name", id=S(), name=S(), uri=S(), external_urls=O("", spotify=URL()))})

schema("spotify_player_play", O(
    "", context_uri=S(pat="^spotify:(album|artist|playlist|show):[0-9A-Za-z]{22}$"), uris=A(S(pat="^spotify:(track|episode):[0-9A-Za-z]{22}$")),
    offset=ANY(O("position", position=I(min=0)), O("uri", uri=S())), position_ms=I(min=0)),
    title="Spotify start/resume playback")

schema("figma_comment_post", O(
    "message", message=S(), comment_id=S(), client_meta=ANY(O("x y", x=N(), y=N()), O("node_id node_offset", node_id=S(), node_offset=O("x y", x=N(), y=N())))),
    title="Figma post comment")

schema("airtable_records_create", O(
    "records", records=A(O("fields", fields=MAP(TYPES("string", "number", "boolean", "array", "null"))), min=1, max=10),
    typecast=B(), returnFieldsByFieldId=B()), title="Airtable create records")

schema("zapier_catch_hook", O(
    "", event=S(), occurred_at=TS(), data=MAP(TYPES("string", "number", "boolean", "null"))), title="Zapier catch hook payload")
