"""Weather, maps, travel, media, health (FHIR), finance data, IoT, web protocols and LLM APIs."""
from dsl import *

LAT = N("Latitude in degrees.", min=-90, max=90)
LON = N("Longitude in degrees.", min=-180, max=180)

schema("weather_api_forecast", O(
    "location forecast", location=O("name lat lon tz_id", name=S(), region=S(), country=S(), lat=LAT, lon=LON, tz_id=S(), localtime=S()),
    current=O("temp_c condition", last_updated=S(), temp_c=N(), temp_f=N(), is_day=I(min=0, max=1),
              condition=O("text code", text=S(), icon=S(), code=I(min=1000, max=1282)), wind_kph=N(min=0), wind_degree=I(min=0, max=360),
              wind_dir=E("N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW"),
              pressure_mb=N(min=800, max=1100), precip_mm=N(min=0), humidity=I(min=0, max=100), cloud=I(min=0, max=100), uv=N(min=0)),
    forecast=O("forecastday", forecastday=A(O("date day", date=DATE(), date_epoch=I(min=0),
                                             day=O("maxtemp_c mintemp_c", maxtemp_c=N(), mintemp_c=N(), avgtemp_c=N(), maxwind_kph=N(min=0), totalprecip_mm=N(min=0),
                                                   avghumidity=I(min=0, max=100), daily_chance_of_rain=I(min=0, max=100), daily_chance_of_snow=I(min=0, max=100),
                                                   condition=O("text code", text=S(), icon=S(), code=I())),
                                             astro=O("sunrise sunset", sunrise=S(pat="^[0-9]{2}:[0-9]{2} (AM|PM)$"), sunset=S(pat="^[0-9]{2}:[0-9]{2} (AM|PM)$"),
                                                     moon_phase=E("New Moon", "Waxing Crescent", "First Quarter", "Waxing Gibbous", "Full Moon", "Waning Gibbous", "Last Quarter", "Waning Crescent")),
                                             hour=A(O("time temp_c", time=S(), temp_c=N(), chance_of_rain=I(min=0, max=100), will_it_rain=I(min=0, max=1)), max=24)), min=1, max=14))),
    title="WeatherAPI forecast response")

schema("openweather_current", O(
    "coord weather main dt name", coord=O("lon lat", lon=LON, lat=LAT),
    weather=A(O("id main description icon", id=I(min=200, max=804), main=S(), description=S(), icon=S(pat="^[0-9]{2}[dn]$")), min=1),
    main=O("temp feels_like pressure humidity", temp=N(), feels_like=N(), temp_min=N(), temp_max=N(), pressure=I(min=0), humidity=I(min=0, max=100)),
    visibility=I(min=0, max=10000), wind=O("speed deg", speed=N(min=0), deg=I(min=0, max=360), gust=N(min=0)), clouds=O("all", all=I(min=0, max=100)),
    dt=I(min=0), sys=O("country sunrise sunset", country=COUNTRY(), sunrise=I(min=0), sunset=I(min=0)), timezone=I(min=-43200, max=50400),
    id=I(min=0), name=S(), cod=I()),
    title="OpenWeatherMap current weather")

schema("nws_alert", O(
    "id type properties", id=URL(), type=C("Feature"),
    properties=O("event severity certainty urgency headline", event=S(), severity=E("Extreme", "Severe", "Moderate", "Minor", "Unknown"),
                 certainty=E("Observed", "Likely", "Possible", "Unlikely", "Unknown"), urgency=E("Immediate", "Expected", "Future", "Past", "Unknown"),
                 headline=S(), description=S(), instruction=OPT(S()), areaDesc=S(), sent=TS(), effective=TS(), expires=TS(),
                 senderName=S(), status=E("Actual", "Exercise", "System", "Test", "Draft"), messageType=E("Alert", "Update", "Cancel"))),
    title="National Weather Service alert feature")

GEOMETRY = ANY(O("type coordinates", type=C("Point"), coordinates=R("position")),
               O("type coordinates", type=C("LineString"), coordinates=A(R("position"), min=2)),
               O("type coordinates", type=C("Polygon"), coordinates=A(A(R("position"), min=4))),
               O("type coordinates", type=C("MultiPoint"), coordinates=A(R("position"))),
               O("type geometries", type=C("GeometryCollection"), geometries=A(R("geometry"))))
schema("geojson_feature_collection", O(
    "type features", type=C("FeatureCollection"),
    features=A(O("type geometry properties", type=C("Feature"), id=ANY(S(), N()), geometry=OPT(R("geometry")),
                 properties=OPT(MAP(TYPES("string", "number", "boolean", "null")))))),
    title="GeoJSON FeatureCollection", d="GeometryCollection makes geometry recursive.",
    defs={"position": A(N(), min=2, max=3), "geometry": GEOMETRY})

schema("mapbox_geocoding_feature", O(
    "id type place_type text place_name center geometry", id=S(), type=C("Feature"), place_type=A(E("country", "region", "postcode", "district", "place", "locality", "neighborhood", "address", "poi")),
    relevance=N(min=0, max=1), text=S(), place_name=S(), center=T(LON, LAT), geometry=O("type coordinates", type=C("Point"), coordinates=T(LON, LAT)),
    bbox=T(LON, LAT, LON, LAT), context=A(O("id text", id=S(), text=S(), short_code=S(), wikidata=S(pat="^Q[0-9]+$")))),
    title="Mapbox geocoding feature")

schema("nasa_apod", O(
    "date explanation media_type title url", date=DATE(), explanation=S(), hdurl=URL(), media_type=E("image", "video"),
    service_version=C("v1"), title=S(), url=URL(), copyright=S()), title="NASA Astronomy Picture of the Day")

schema("spacex_launch", O(
    "id name date_utc success rocket", id=S(pat="^[0-9a-f]{24}$"), name=S(), flight_number=I(min=1), date_utc=TS(), date_precision=E("half", "quarter", "year", "month", "day", "hour"),
    upcoming=B(), success=OPT(B()), rocket=S(pat="^[0-9a-f]{24}$"), launchpad=S(), details=OPT(S()),
    cores=A(O("core", core=OPT(S()), flight=OPT(I(min=1)), reused=OPT(B()), landing_attempt=OPT(B()), landing_success=OPT(B()), landing_type=OPT(E("ASDS", "RTLS", "Ocean")))),
    failures=A(O("time reason", time=I(), altitude=OPT(I()), reason=S())),
    links=O("", patch=O("", small=OPT(URL()), large=OPT(URL())), webcast=OPT(URL()), wikipedia=OPT(URL()), article=OPT(URL()))),
    title="SpaceX launch")

schema("tmdb_movie", O(
    "id title release_date", id=I(min=1), imdb_id=OPT(S(pat="^tt[0-9]{7,8}$")), title=S(), original_title=S(), original_language=S(pat="^[a-z]{2}$"),
    overview=S(), release_date=DATE(), runtime=OPT(I(min=0)), budget=I(min=0), revenue=I(min=0), popularity=N(min=0),
    vote_average=N(min=0, max=10), vote_count=I(min=0), adult=B(), status=E("Rumored", "Planned", "In Production", "Post Production", "Released", "Canceled"),
    genres=A(O("id name", id=I(), name=S())), poster_path=OPT(S(pat="^/.+\\.(jpg|png)$")), homepage=OPT(S()),
    production_companies=A(O("id name", id=I(), name=S(), origin_country=S())), spoken_languages=A(O("iso_639_1 name", iso_639_1=S(), name=S()))),
    title="TMDB movie details")

schema("openlibrary_book", O(
    "title", title=S(), subtitle=S(), authors=A(O("key", key=S(pat="^/authors/OL[0-9]+A$"))), publishers=A(S()), publish_date=S(),
    number_of_pages=I(min=1), isbn_10=A(S(pat="^[0-9]{9}[0-9X]$")), isbn_13=A(S(pat="^97[89][0-9]{10}$")), subjects=A(S()),
    languages=A(O("key", key=S())), covers=A(I())), title="Open Library edition")

schema("yelp_business", O(
    "id name rating coordinates location", id=S(), alias=S(pat="^[a-z0-9-]+$"), name=S(), image_url=URL(), is_closed=B(), url=URL(),
    review_count=I(min=0), categories=A(O("alias title", alias=S(), title=S())), rating=N(min=1, max=5), price=S(pat="^\\${1,4}$"),
    coordinates=O("latitude longitude", latitude=LAT, longitude=LON), transactions=A(E("pickup", "delivery", "restaurant_reservation")),
    location=O("address1 city country", address1=S(), address2=OPT(S()), city=S(), zip_code=S(), state=S(), country=COUNTRY(), display_address=A(S())),
    phone=S(), display_phone=S(), distance=N(min=0)),
    title="Yelp business")

schema("uber_ride_request", O(
    "product_id start_latitude start_longitude", product_id=UUID(), fare_id=S(), start_latitude=LAT, start_longitude=LON,
    end_latitude=LAT, end_longitude=LON, start_nickname=S(), end_address=S(), surge_confirmation_id=S(), payment_method_id=S(), seat_count=I(min=1, max=2)),
    title="Uber ride request")

schema("doordash_delivery_create", O(
    "external_delivery_id pickup_address pickup_phone_number dropoff_address dropoff_phone_number", external_delivery_id=S(),
    pickup_address=S(), pickup_business_name=S(), pickup_phone_number=S(pat="^\\+[1-9][0-9]{7,14}$"), pickup_instructions=S(),
    dropoff_address=S(), dropoff_business_name=S(), dropoff_phone_number=S(pat="^\\+[1-9][0-9]{7,14}$"), dropoff_instructions=S(),
    dropoff_contact_given_name=S(), order_value=I(min=0), currency=S(pat="^[A-Z]{3}$"), tip=I(min=0), pickup_time=TS(), dropoff_time=TS(),
    contactless_dropoff=B(), action_if_undeliverable=E("return_to_pickup", "dispose"),
    items=A(O("name quantity", name=S(), description=S(), quantity=I(min=1), external_id=S()))),
    title="DoorDash Drive create delivery")

schema("airbnb_listing", O(
    "id name room_type price", id=S(pat="^[0-9]+$"), name=S(), description=S(), property_type=S(), room_type=E("Entire home/apt", "Private room", "Shared room", "Hotel room"),
    accommodates=I(min=1, max=16), bedrooms=OPT(I(min=0)), beds=OPT(I(min=0)), bathrooms_text=S(), amenities=A(S()),
    price=S(pat="^\\$[0-9,]+\\.[0-9]{2}$"), minimum_nights=I(min=1), maximum_nights=I(min=1), instant_bookable=B(),
    host=O("id name is_superhost", id=S(), name=S(), is_superhost=B(), response_rate=OPT(S(pat="^[0-9]{1,3}%$"))),
    latitude=LAT, longitude=LON, review_scores_rating=OPT(N(min=0, max=5)), number_of_reviews=I(min=0)),
    title="Airbnb listing (Inside Airbnb export)")

schema("amadeus_flight_offer", O(
    "type id source itineraries price travelerPricings", type=C("flight-offer"), id=S(), source=E("GDS", "NDC"), instantTicketingRequired=B(),
    oneWay=B(), lastTicketingDate=DATE(), numberOfBookableSeats=I(min=1, max=9),
    itineraries=A(O("segments", duration=S(pat="^PT([0-9]+H)?([0-9]+M)?$"),
                    segments=A(O("departure arrival carrierCode number", departure=R("endpoint"), arrival=R("endpoint"), carrierCode=S(pat="^[A-Z0-9]{2}$"),
                                 number=S(pat="^[0-9]{1,4}$"), aircraft=O("code", code=S()), duration=S(), numberOfStops=I(min=0), id=S()), min=1)), min=1, max=2),
    price=O("currency total", currency=CURRENCY(), total=S(pat="^[0-9]+\\.[0-9]{2}$"), base=S(), grandTotal=S(),
            fees=A(O("amount type", amount=S(), type=E("SUPPLIER", "TICKETING", "FORM_OF_PAYMENT")))),
    validatingAirlineCodes=A(S(pat="^[A-Z0-9]{2}$")),
    travelerPricings=A(O("travelerId fareOption travelerType price", travelerId=S(), fareOption=E("STANDARD", "INCLUSIVE_TOUR", "SPANISH_MELILLA_RESIDENT"),
                         travelerType=E("ADULT", "CHILD", "SENIOR", "YOUNG", "HELD_INFANT", "SEATED_INFANT", "STUDENT"),
                         price=O("currency total", currency=CURRENCY(), total=S()),
                         fareDetailsBySegment=A(O("segmentId cabin", segmentId=S(), cabin=E("ECONOMY", "PREMIUM_ECONOMY", "BUSINESS", "FIRST"), fareBasis=S(), brandedFare=S(), class_=S(pat="^[A-Z]$"),
                                                  includedCheckedBags=O("", quantity=I(min=0), weight=I(min=0), weightUnit=E("KG", "LB"))))))),
    title="Amadeus flight offer", defs={"endpoint": O("iataCode at", iataCode=S(pat="^[A-Z]{3}$"), terminal=S(), at=S(pat="^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$"))})

schema("espn_game_score", O(
    "id date status competitors", id=S(), date=TS(), name=S(), status=E("scheduled", "in_progress", "halftime", "final", "postponed"),
    period=I(min=0, max=10), clock=S(pat="^[0-9]{1,2}:[0-9]{2}$"),
    competitors=T(R("team"), R("team"), min=2), venue=O("", fullName=S(), city=S(), indoor=B()), attendance=I(min=0)),
    title="Game scoreboard entry", defs={"team": O("id abbreviation score homeAway", id=S(), abbreviation=S(pat="^[A-Z]{2,4}$"), displayName=S(),
                                                  score=I(min=0), homeAway=E("home", "away"), winner=B(), record=S(pat="^[0-9]+-[0-9]+(-[0-9]+)?$"))})

schema("strava_activity_create", O(
    "name sport_type start_date_local elapsed_time", name=S(), type=S(), sport_type=E("Run", "Ride", "Swim", "Walk", "Hike", "VirtualRide", "WeightTraining", "Yoga", "TrailRun", "Rowing"),
    start_date_local=TS(), elapsed_time=I(min=1), description=S(), distance=N(min=0), trainer=I(min=0, max=1), commute=I(min=0, max=1)),
    title="Strava create activity")

schema("fitbit_activity_log", O(
    "activities summary", activities=A(O("activityId name startTime duration calories", activityId=I(), name=S(), startTime=S(pat="^[0-9]{2}:[0-9]{2}$"),
                                         duration=I(min=0), calories=I(min=0), steps=I(min=0), distance=N(min=0), hasActiveZoneMinutes=B())),
    summary=O("steps caloriesOut", steps=I(min=0), caloriesOut=I(min=0), activityCalories=I(min=0), sedentaryMinutes=I(min=0, max=1440),
              lightlyActiveMinutes=I(min=0, max=1440), fairlyActiveMinutes=I(min=0, max=1440), veryActiveMinutes=I(min=0, max=1440), restingHeartRate=I(min=20, max=200),
              distances=A(O("activity distance", activity=S(), distance=N(min=0))))),
    title="Fitbit daily activity summary")

CODING = O("system code", system=URL(), code=S(), display=S())
CODEABLE = O("", coding=A(CODING), text=S())
REFERENCE = O("reference", reference=S(pat="^[A-Za-z]+/[A-Za-z0-9.-]+$"), display=S())

schema("fhir_patient", O(
    "resourceType", resourceType=C("Patient"), id=S(pat="^[A-Za-z0-9.-]{1,64}$"), active=B(),
    identifier=A(O("value", use=E("usual", "official", "temp", "secondary", "old"), system=URL(), value=S())),
    name=A(O("", use=E("usual", "official", "temp", "nickname", "anonymous", "old", "maiden"), family=S(), given=A(S()), prefix=A(S()), suffix=A(S()))),
    telecom=A(O("system value", system=E("phone", "fax", "email", "pager", "url", "sms", "other"), value=S(), use=E("home", "work", "temp", "old", "mobile"))),
    gender=E("male", "female", "other", "unknown"), birthDate=DATE(), deceasedBoolean=B(),
    address=A(O("", use=E("home", "work", "temp", "old", "billing"), line=A(S()), city=S(), state=S(), postalCode=S(), country=S())),
    maritalStatus=CODEABLE, communication=A(O("language", language=CODEABLE, preferred=B())), generalPractitioner=A(REFERENCE)),
    title="FHIR R4 Patient")

schema("fhir_observation", O(
    "resourceType status code", resourceType=C("Observation"), id=S(), status=E("registered", "preliminary", "final", "amended", "corrected", "cancelled", "entered-in-error", "unknown"),
    category=A(CODEABLE), code=CODEABLE, subject=REFERENCE, effectiveDateTime=TS(), issued=TS(),
    valueQuantity=O("value unit", value=N(), unit=S(), system=URL(), code=S()), valueString=S(), valueBoolean=B(),
    interpretation=A(CODEABLE), referenceRange=A(O("", low=O("value", value=N(), unit=S()), high=O("value", value=N(), unit=S()), text=S())),
    component=A(O("code", code=CODEABLE, valueQuantity=O("value unit", value=N(), unit=S())))),
    title="FHIR R4 Observation")

schema("fhir_appointment", O(
    "resourceType status participant", resourceType=C("Appointment"), status=E("proposed", "pending", "booked", "arrived", "fulfilled", "cancelled", "noshow", "entered-in-error", "checked-in", "waitlist"),
    serviceType=A(CODEABLE), appointmentType=CODEABLE, reasonCode=A(CODEABLE), description=S(), start=TS(), end=TS(), minutesDuration=I(min=1),
    comment=S(), participant=A(O("status", actor=REFERENCE, required=E("required", "optional", "information-only"), status=E("accepted", "declined", "tentative", "needs-action")), min=1)),
    title="FHIR R4 Appointment")

schema("openai_chat_completion_request", O(
    "model messages", model=S(), messages=A(R("message"), min=1),
    temperature=N(min=0, max=2), top_p=N(min=0, max=1), n=I(min=1, max=128), stream=B(), stop=ANY(S(), A(S(), max=4), NULL()),
    max_completion_tokens=I(min=1), presence_penalty=N(min=-2, max=2), frequency_penalty=N(min=-2, max=2), logit_bias=MAP(I(min=-100, max=100)),
    logprobs=B(), top_logprobs=I(min=0, max=20), user=S(), seed=I(),
    tools=A(O("type function", type=C("function"), function=O("name", name=S(pat="^[a-zA-Z0-9_-]{1,64}$"), description=S(),
                                                              parameters=MAP(TYPES("string", "number", "boolean", "object", "array", "null")), strict=B())), max=128),
    tool_choice=ANY(E("none", "auto", "required"), O("type function", type=C("function"), function=O("name", name=S()))),
    response_format=ANY(O("type", type=C("text")), O("type", type=C("json_object")),
                        O("type json_schema", type=C("json_schema"), json_schema=O("name", name=S(), description=S(), schema=MAP(TYPES("string", "number", "boolean", "object", "array", "null")), strict=B()))),
    reasoning_effort=E("minimal", "low", "medium", "high")),
    title="OpenAI chat completions request",
    defs={"message": O("role", role=E("system", "developer", "user", "assistant", "tool"),
                       content=ANY(S(), A(O("type", type=E("text", "image_url"), text=S(), image_url=O("url", url=S(), detail=E("auto", "low", "high")))), NULL()),
                       name=S(), tool_call_id=S(),
                       tool_calls=A(O("id type function", id=S(), type=C("function"), function=O("name arguments", name=S(), arguments=S()))))})

schema("openai_chat_completion_response", O(
    "id object created model choices", id=S(pat="^chatcmpl-[A-Za-z0-9]+$"), object=C("chat.completion"), created=I(min=0), model=S(),
    system_fingerprint=OPT(S()),
    choices=A(O("index message finish_reason", index=I(min=0), finish_reason=E("stop", "length", "tool_calls", "content_filter"),
                message=O("role content", role=C("assistant"), content=OPT(S()), refusal=OPT(S()),
                          tool_calls=A(O("id type function", id=S(), type=C("function"), function=O("name arguments", name=S(), arguments=S())))),
                logprobs=NULL()), min=1),
    usage=O("prompt_tokens completion_tokens total_tokens", prompt_tokens=I(min=0), completion_tokens=I(min=0), total_tokens=I(min=0),
            prompt_tokens_details=O("", cached_tokens=I(min=0)), completion_tokens_details=O("", reasoning_tokens=I(min=0)))),
    title="OpenAI chat completion response")

schema("anthropic_messages_request", O(
    "model max_tokens messages", model=S(), max_tokens=I(min=1), system=ANY(S(), A(O("type text", type=C("text"), text=S()))),
    messages=A(O("role content", role=E("user", "assistant"),
                 content=ANY(S(), A(O("type", type=E("text", "image", "tool_use", "tool_result"), text=S(), id=S(), name=S(), tool_use_id=S(),
                                     input=MAP(TYPES("string", "number", "boolean", "object", "array", "null")), content=S(), is_error=B(),
                                     source=O("type media_type data", type=C("base64"), media_type=E("image/jpeg", "image/png", "image/gif", "image/webp"), data=S()))))), min=1),
    temperature=N(min=0, max=1), top_p=N(min=0, max=1), top_k=I(min=0), stop_sequences=A(S()), stream=B(),
    tools=A(O("name input_schema", name=S(pat="^[a-zA-Z0-9_-]{1,64}$"), description=S(), input_schema=MAP(TYPES("string", "number", "boolean", "object", "array", "null")))),
    tool_choice=O("type", type=E("auto", "any", "tool", "none"), name=S(), disable_parallel_tool_use=B()),
    metadata=O("", user_id=S())),
    title="Anthropic Messages API request")

schema("huggingface_model_card", O(
    "license", language=ANY(S(), A(S())), license=S(), library_name=S(), pipeline_tag=E("text-generation", "text-classification", "token-classification", "translation", "summarization", "fill-mask", "image-classification", "automatic-speech-recognition", "feature-extraction"),
    tags=A(S()), datasets=A(S()), base_model=ANY(S(), A(S())), metrics=A(S()),
    model_index=A(O("name results", name=S(), results=A(O("task dataset metrics", task=O("type", type=S(), name=S()), dataset=O("type name", type=S(), name=S(), split=S()),
                                                           metrics=A(O("type value", type=S(), value=N(), name=S()))))))),
    title="Hugging Face model card metadata")

schema("pypi_project_json", O(
    "info releases", info=O("name version summary", name=S(), version=S(), summary=OPT(S()), author=OPT(S()), author_email=OPT(S()), license=OPT(S()),
                            home_page=OPT(S()), requires_python=OPT(S()), requires_dist=OPT(A(S())), classifiers=A(S()), keywords=OPT(S()),
                            project_urls=OPT(MAP(URL())), yanked=B()),
    releases=MAP(A(O("filename url packagetype", filename=S(), url=URL(), packagetype=E("sdist", "bdist_wheel"), python_version=S(), size=I(min=0),
                     upload_time_iso_8601=TS(), digests=O("sha256", sha256=S(pat="^[0-9a-f]{64}$"), md5=S()), yanked=B())))),
    title="PyPI JSON API project")

schema("coingecko_simple_price", MAP(MAP(N(min=0)), "Coin id to currency to price."), title="CoinGecko simple/price response")

schema("alphavantage_global_quote", O(
    ["Global Quote"], {"Global Quote": O(["01. symbol", "05. price"], {"01. symbol": S(), "02. open": S(), "03. high": S(), "04. low": S(), "05. price": S(pat="^[0-9]+\\.[0-9]{4}$"),
                                                                  "06. volume": S(pat="^[0-9]+$"), "07. latest trading day": DATE(), "08. previous close": S(),
                                                                  "09. change": S(), "10. change percent": S(pat="^-?[0-9]+\\.[0-9]{4}%$")})}),
    title="Alpha Vantage GLOBAL_QUOTE")

schema("sec_edgar_filing", O(
    "cik form filingDate accessionNumber", cik=S(pat="^[0-9]{10}$"), companyName=S(), form=E("10-K", "10-Q", "8-K", "S-1", "DEF 14A", "4", "13F-HR"),
    filingDate=DATE(), reportDate=OPT(DATE()), accessionNumber=S(pat="^[0-9]{10}-[0-9]{2}-[0-9]{6}$"), primaryDocument=S(), items=A(S(pat="^[0-9]\\.[0-9]{2}$"))),
    title="SEC EDGAR filing entry")

schema("mqtt_sensor_telemetry", O(
    "device_id ts readings", device_id=S(pat="^[a-z0-9-]{4,32}$"), ts=I("Unix epoch milliseconds.", min=0), fw=S(pat="^[0-9]+\\.[0-9]+\\.[0-9]+$"),
    battery=I(min=0, max=100), rssi=I(min=-120, max=0),
    readings=A(O("sensor value unit", sensor=E("temperature", "humidity", "pressure", "co2", "pm25", "voc", "lux", "motion"), value=N(), unit=E("C", "%", "hPa", "ppm", "ug/m3", "ppb", "lx", "bool")), min=1, max=16),
    location=OPT(T(LAT, LON))),
    title="MQTT sensor telemetry message")

schema("home_assistant_state", O(
    "entity_id state attributes last_changed", entity_id=S(pat="^[a-z_]+\\.[a-z0-9_]+$"), state=S(), last_changed=TS(), last_updated=TS(),
    attributes=O("", friendly_name=S(), unit_of_measurement=S(), device_class=S(), icon=S(pat="^mdi:[a-z0-9-]+$"), brightness=I(min=0, max=255),
                 rgb_color=T(I(min=0, max=255), I(min=0, max=255), I(min=0, max=255)), addl=TYPES("string", "number", "boolean", "null", "array")),
    context=O("id", id=S(), parent_id=OPT(S()), user_id=OPT(S()))),
    title="Home Assistant entity state")

schema("philips_hue_light_state", O(
    "", on=B(), bri=I(min=1, max=254), hue=I(min=0, max=65535), sat=I(min=0, max=254), xy=T(N(min=0, max=1), N(min=0, max=1)), ct=I(min=153, max=500),
    alert=E("none", "select", "lselect"), effect=E("none", "colorloop"), transitiontime=I(min=0, max=65535)),
    title="Philips Hue light state (v1)")

schema("ocpp_boot_notification", O(
    "chargingStation reason", reason=E("ApplicationReset", "FirmwareUpdate", "LocalReset", "PowerUp", "RemoteReset", "ScheduledReset", "Triggered", "Unknown", "Watchdog"),
    chargingStation=O("model vendorName", serialNumber=S(max=25), model=S(max=20), vendorName=S(max=50), firmwareVersion=S(max=50),
                      modem=O("", iccid=S(max=20), imsi=S(max=20)))),
    title="OCPP 2.0.1 BootNotificationRequest")

schema("tesla_vehicle_data", O(
    "id vin state charge_state", id=I(min=1), vin=S(pat="^[A-HJ-NPR-Z0-9]{17}$"), display_name=S(), state=E("online", "asleep", "offline"),
    charge_state=O("battery_level charging_state", battery_level=I(min=0, max=100), battery_range=N(min=0), charge_limit_soc=I(min=50, max=100),
                   charging_state=E("Charging", "Complete", "Disconnected", "Stopped", "NoPower"), charge_rate=N(min=0), minutes_to_full_charge=I(min=0)),
    climate_state=O("", inside_temp=OPT(N()), outside_temp=OPT(N()), is_climate_on=B(), driver_temp_setting=N(min=15, max=28)),
    drive_state=O("", latitude=LAT, longitude=LON, heading=I(min=0, max=359), speed=OPT(I(min=0)), shift_state=OPT(E("P", "D", "R", "N")))),
    title="Vehicle data (Tesla Fleet API style)")

schema("jsonrpc_request", O(
    "jsonrpc method", jsonrpc=C("2.0"), method=S(pat="^[a-zA-Z_][a-zA-Z0-9_./]*$"),
    params=ONE(A(TYPES("string", "number", "boolean", "null", "object", "array")), MAP(TYPES("string", "number", "boolean", "null", "object", "array"))),
    id=ONE(S(), I(), NULL())), title="JSON-RPC 2.0 request")

schema("jsonrpc_response", O(
    "jsonrpc id", jsonrpc=C("2.0"), id=ANY(S(), I(), NULL()), result=TYPES("string", "number", "boolean", "null", "object", "array"),
    error=O("code message", code=I(min=-32768, max=32767), message=S(), data=TYPES("string", "object", "array"))),
    title="JSON-RPC 2.0 response")

schema("graphql_request", O(
    "query", query=S(min=1), operationName=OPT(S(pat="^[_A-Za-z][_0-9A-Za-z]*$")), variables=OPT(MAP(TYPES("string", "number", "boolean", "null", "object", "array"))),
    extensions=O("", persistedQuery=O("version sha256Hash", version=C(1), sha256Hash=S(pat="^[0-9a-f]{64}$")))),
    title="GraphQL over HTTP request")

schema("jsonapi_resource", O(
    "data", data=O("type id attributes", type=S(pat="^[a-z][a-z0-9-]*$"), id=S(), attributes=MAP(TYPES("string", "number", "boolean", "null", "array", "object")),
                   relationships=MAP(O("data", data=ANY(O("type id", type=S(), id=S()), A(O("type id", type=S(), id=S())), NULL()))),
                   links=O("", self=URL())),
    included=A(O("type id", type=S(), id=S(), attributes=MAP(TYPES("string", "number", "boolean", "null")))), meta=MAP(TYPES("string", "number"))),
    title="JSON:API single resource document")

schema("jwt_claims", O(
    "iss sub aud exp iat", iss=URL(), sub=S(), aud=ANY(S(), A(S(), min=1)), exp=I(min=0), nbf=I(min=0), iat=I(min=0), jti=S(),
    scope=S(), azp=S(), email=EMAIL(), email_verified=B(), name=S(), roles=A(S()), addl=TYPES("string", "number", "boolean", "array")),
    title="JWT claims set")

schema("oauth_token_response", O(
    "access_token token_type", access_token=S(), token_type=E("Bearer", "bearer", "DPoP", "mac"), expires_in=I(min=0), refresh_token=S(),
    scope=S(), id_token=S(pat="^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]*$")), title="OAuth 2.0 token response")

schema("oidc_discovery", O(
    "issuer authorization_endpoint jwks_uri response_types_supported subject_types_supported id_token_signing_alg_values_supported",
    issuer=URL(), authorization_endpoint=URL(), token_endpoint=URL(), userinfo_endpoint=URL(), jwks_uri=URL(), registration_endpoint=URL(),
    scopes_supported=A(S()), response_types_supported=A(S(), min=1), grant_types_supported=A(S()), subject_types_supported=A(E("public", "pairwise"), min=1),
    id_token_signing_alg_values_supported=A(E("RS256", "RS384", "RS512", "ES256", "ES384", "PS256", "HS256", "EdDSA"), min=1),
    token_endpoint_auth_methods_supported=A(E("client_secret_basic", "client_secret_post", "private_key_jwt", "none")), claims_supported=A(S()),
    code_challenge_methods_supported=A(E("plain", "S256"))),
    title="OpenID Connect discovery document")

schema("activitypub_note", O(
    "@context type id attributedTo content published", {"@context": ANY(S(), A(ANY(S(), MAP(S()))))},
    type=C("Note"), id=URL(), attributedTo=URL(), content=S(), published=TS(), to=A(URL()), cc=A(URL()), inReplyTo=OPT(URL()),
    sensitive=B(), summary=OPT(S()), tag=A(O("type href name", type=E("Mention", "Hashtag", "Emoji"), href=URL(), name=S())),
    attachment=A(O("type mediaType url", type=E("Document", "Image", "Video"), mediaType=S(), url=URL(), name=OPT(S())))),
    title="ActivityPub Note")

schema("schemaorg_product_jsonld", O(
    "@context @type name", {"@context": C("https://schema.org"), "@type": C("Product")}, name=S(), image=A(URL()), description=S(), sku=S(), mpn=S(),
    gtin13=S(pat="^[0-9]{13}$"), brand=O("@type name", {"@type": C("Brand")}, name=S()),
    aggregateRating=O("@type ratingValue reviewCount", {"@type": C("AggregateRating")}, ratingValue=N(min=0, max=5), reviewCount=I(min=0)),
    offers=O("@type price priceCurrency", {"@type": C("Offer")}, url=URL(), price=S(pat="^[0-9]+(\\.[0-9]{2})?$"), priceCurrency=CURRENCY(),
             availability=E("https://schema.org/InStock", "https://schema.org/OutOfStock", "https://schema.org/PreOrder", "https://schema.org/Discontinued"),
             itemCondition=E("https://schema.org/NewCondition", "https://schema.org/UsedCondition", "https://schema.org/RefurbishedCondition"),
             priceValidUntil=DATE())),
    title="schema.org Product (JSON-LD)")

schema("rss_feed_item", O(
    "title link pubDate", title=S(), link=URL(), description=S(), author=S(), category=A(S()), guid=O("value", value=S(), isPermaLink=B()),
    pubDate=S(pat="^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} [+-][0-9]{4}$"),
    enclosure=O("url length type", url=URL(), length=I(min=0), type=S())), title="RSS 2.0 item (as JSON)")

schema("dependabot_config", O(
    "version updates", version=C(2),
    updates=A(O("package-ecosystem directory schedule", {"package-ecosystem": E("npm", "pip", "cargo", "gomod", "docker", "github-actions", "maven", "gradle", "nuget", "bundler", "composer"),
                                                         "open-pull-requests-limit": I(min=0, max=100), "target-branch": S(), "commit-message": O("prefix", prefix=S(max=50), include=C("scope"))},
                directory=S(pat="^/.*$"), schedule=O("interval", interval=E("daily", "weekly", "monthly"), day=E("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"),
                                                     time=S(pat="^[0-2][0-9]:[0-5][0-9]$"), timezone=S()),
                labels=A(S()), reviewers=A(S()), ignore=A(O("dependency-name", {"dependency-name": S(), "versions": A(S()), "update-types": A(S())}))), min=1)),
    title="Dependabot configuration (dependabot.yml as JSON)")

schema("wikipedia_page_summary", O(
    "type title extract", type=E("standard", "disambiguation", "mainpage", "no-extract"), title=S(), displaytitle=S(), pageid=I(min=1),
    description=OPT(S()), extract=S(), extract_html=S(), lang=S(pat="^[a-z]{2,3}$"), timestamp=TS(),
    thumbnail=O("source width height", source=URL(), width=I(min=1), height=I(min=1)),
    coordinates=O("lat lon", lat=LAT, lon=LON), content_urls=O("desktop", desktop=O("page", page=URL()), mobile=O("page", page=URL()))),
    title="Wikipedia REST page summary")
