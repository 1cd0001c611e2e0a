"""Form and extraction schemas: what an application asks a model to pull out of a document or fill in."""
from dsl import *

MONEY = N("Amount in the document's currency.", min=0)
PHONE = S("Phone number, E.164 preferred.", pat="^\\+?[0-9 ()-]{7,20}$")
PERSON = O("full_name", full_name=S(), email=OPT(EMAIL()), phone=OPT(PHONE))
PARTY = O("name", name=S(), address=OPT(ADDRESS()), tax_id=OPT(S()), email=OPT(EMAIL()), phone=OPT(PHONE))

schema("extract_invoice", O(
    "invoice_number issue_date seller buyer line_items total currency",
    invoice_number=S(), issue_date=DATE(), due_date=OPT(DATE()), purchase_order=OPT(S()), seller=R("party"), buyer=R("party"),
    currency=CURRENCY(),
    line_items=A(O("description quantity unit_price amount", description=S(), sku=OPT(S()), quantity=N(min=0), unit=OPT(S()),
                   unit_price=MONEY, tax_rate=OPT(N(min=0, max=100)), amount=MONEY), min=1),
    subtotal=MONEY, tax_total=MONEY, discount_total=MONEY, shipping=MONEY, total=MONEY, amount_paid=MONEY, balance_due=MONEY,
    payment_terms=OPT(S(examples=["Net 30"])), payment_instructions=OPT(O("", iban=S(pat="^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$"), bic=S(pat="^[A-Z]{6}[A-Z0-9]{2}([A-Z0-9]{3})?$"),
                                                                         account_number=S(), routing_number=S(pat="^[0-9]{9}$"))),
    notes=OPT(S())),
    title="Invoice extraction", defs={"party": PARTY})

schema("extract_receipt", O(
    "merchant date total items", merchant=O("name", name=S(), address=OPT(S()), phone=OPT(S())), date=DATE(), time=OPT(S(pat="^[0-2][0-9]:[0-5][0-9]$")),
    items=A(O("name price", name=S(), quantity=I(min=1, default=1), price=MONEY)), subtotal=OPT(MONEY), tax=OPT(MONEY), tip=OPT(MONEY),
    total=MONEY, currency=OPT(CURRENCY()), payment_method=E("cash", "credit_card", "debit_card", "mobile", "gift_card", "other"),
    card_last4=OPT(S(pat="^[0-9]{4}$"))),
    title="Receipt extraction")

schema("extract_resume", O(
    "name contact experience education skills", name=S(), headline=OPT(S()),
    contact=O("", email=OPT(EMAIL()), phone=OPT(PHONE), location=OPT(S()), linkedin=OPT(URL()), website=OPT(URL()), github=OPT(URL())),
    summary=OPT(S(max=2000)),
    experience=A(O("company title start_date", company=S(), title=S(), location=OPT(S()), start_date=S(pat="^[0-9]{4}(-[0-9]{2})?$"),
                   end_date=OPT(S(pat="^[0-9]{4}(-[0-9]{2})?$")), current=B(), highlights=A(S(), max=10))),
    education=A(O("institution", institution=S(), degree=OPT(S()), field=OPT(S()), start_year=OPT(I(min=1950, max=2035)),
                  end_year=OPT(I(min=1950, max=2040)), gpa=OPT(N(min=0, max=10)))),
    skills=A(S(), max=50), languages=A(O("language", language=S(), proficiency=E("elementary", "limited_working", "professional_working", "full_professional", "native"))),
    certifications=A(O("name", name=S(), issuer=OPT(S()), year=OPT(I(min=1950, max=2040)))),
    projects=A(O("name", name=S(), description=OPT(S()), url=OPT(URL())))),
    title="Resume extraction")

schema("extract_address", O(
    "street city country", recipient=OPT(S()), street=S(), unit=OPT(S()), city=S(), region=OPT(S()), postal_code=OPT(S()),
    country=COUNTRY(), latitude=OPT(N(min=-90, max=90)), longitude=OPT(N(min=-180, max=180))),
    title="Postal address extraction")

schema("extract_product_review", O(
    "rating sentiment summary", product=OPT(S()), rating=I(min=1, max=5), sentiment=E("positive", "neutral", "negative", "mixed"),
    summary=S(max=300), pros=A(S(), max=10), cons=A(S(), max=10), would_recommend=OPT(B()), verified_purchase=OPT(B()),
    aspects=A(O("aspect score", aspect=E("quality", "price", "shipping", "customer_service", "durability", "ease_of_use", "design"), score=I(min=1, max=5)))),
    title="Product review analysis")

schema("form_medical_appointment", O(
    "patient appointment_type preferred_date", patient=O("first_name last_name date_of_birth", first_name=S(), last_name=S(), date_of_birth=DATE(),
                                                        sex=E("female", "male", "other", "unknown"), phone=PHONE, email=OPT(EMAIL()),
                                                        insurance=OPT(O("provider member_id", provider=S(), member_id=S(), group_number=OPT(S())))),
    appointment_type=E("new_patient", "follow_up", "annual_physical", "urgent", "telehealth", "lab_work", "vaccination"),
    specialty=E("primary_care", "cardiology", "dermatology", "pediatrics", "orthopedics", "neurology", "obgyn", "psychiatry", "ophthalmology"),
    preferred_date=DATE(), preferred_time=E("morning", "afternoon", "evening", "any"), reason=S(max=500),
    symptoms=A(O("name", name=S(), duration_days=OPT(I(min=0)), severity=OPT(I(min=1, max=10)))), is_urgent=B(),
    provider_preference=OPT(S())),
    title="Medical appointment request")

schema("form_patient_intake", O(
    "patient emergency_contact", patient=O("first_name last_name date_of_birth", first_name=S(), last_name=S(), date_of_birth=DATE(),
                                            address=ADDRESS(), phone=PHONE, email=OPT(EMAIL()), preferred_language=OPT(S())),
    emergency_contact=O("name relationship phone", name=S(), relationship=S(), phone=PHONE),
    allergies=A(O("substance", substance=S(), reaction=OPT(S()), severity=OPT(E("mild", "moderate", "severe")))),
    medications=A(O("name", name=S(), dose=OPT(S()), frequency=OPT(S()))), conditions=A(S()), surgeries=A(O("procedure", procedure=S(), year=OPT(I(min=1900, max=2100)))),
    smoker=E("never", "former", "current"), alcohol_drinks_per_week=I(min=0, max=100), pregnant=OPT(B()),
    consent_to_treat=C(True), signed_at=TS()),
    title="Patient intake form")

schema("extract_lab_result", O(
    "patient_name collected_at results", patient_name=S(), patient_id=OPT(S()), collected_at=TS(), reported_at=OPT(TS()), lab_name=OPT(S()),
    ordering_provider=OPT(S()),
    results=A(O("test value", test=S(), loinc=OPT(S(pat="^[0-9]{1,5}-[0-9]$")), value=TYPES("number", "string"), unit=OPT(S()),
                reference_low=OPT(N()), reference_high=OPT(N()), flag=OPT(E("L", "H", "LL", "HH", "A", "N"))), min=1)),
    title="Lab report extraction")

schema("extract_prescription", O(
    "patient medication prescriber", patient=S(), date=DATE(),
    medication=O("name strength form sig", name=S(), strength=S(examples=["500 mg"]), form=E("tablet", "capsule", "liquid", "injection", "inhaler", "cream", "patch", "drops"),
                 sig=S("Directions for use."), quantity=I(min=1), refills=I(min=0, max=11), daw=B("Dispense as written.")),
    prescriber=O("name", name=S(), npi=OPT(S(pat="^[0-9]{10}$")), dea=OPT(S(pat="^[A-Z]{2}[0-9]{7}$")))),
    title="Prescription extraction")

schema("form_insurance_claim", O(
    "policy_number claimant incident_date incident_type description", policy_number=S(pat="^[A-Z0-9-]{6,20}$"), claimant=PERSON,
    incident_date=DATE(), incident_type=E("auto_collision", "theft", "fire", "water_damage", "medical", "liability", "weather", "other"),
    location=OPT(S()), description=S(max=5000), police_report_number=OPT(S()), estimated_loss=OPT(MONEY), currency=CURRENCY(),
    witnesses=A(PERSON, max=5), injuries=B(), attachments=A(O("filename kind", filename=S(), kind=E("photo", "receipt", "report", "estimate", "other")))),
    title="Insurance claim form")

schema("extract_job_posting", O(
    "title company location employment_type", title=S(), company=S(), location=S(), remote=E("onsite", "hybrid", "remote"),
    employment_type=E("full_time", "part_time", "contract", "internship", "temporary"), seniority=E("intern", "junior", "mid", "senior", "lead", "principal", "director"),
    salary=OPT(O("min max currency period", min=N(min=0), max=N(min=0), currency=CURRENCY(), period=E("hour", "month", "year"))),
    responsibilities=A(S(), max=20), requirements=A(S(), max=20), nice_to_have=A(S(), max=20), benefits=A(S()), apply_url=OPT(URL()),
    posted_date=OPT(DATE())),
    title="Job posting extraction")

schema("extract_bank_statement", O(
    "account statement_period opening_balance closing_balance transactions", bank=S(),
    account=O("holder number_last4", holder=S(), number_last4=S(pat="^[0-9]{4}$"), type=E("checking", "savings", "credit", "other")),
    statement_period=O("start end", start=DATE(), end=DATE()), currency=CURRENCY(), opening_balance=N(), closing_balance=N(),
    transactions=A(O("date description amount", date=DATE(), description=S(), amount=N(), balance=OPT(N()), category=OPT(S()))),
    ), title="Bank statement extraction")

schema("form_purchase_order", O(
    "po_number order_date vendor ship_to lines", po_number=S(pat="^PO-[0-9]{4,10}$"), order_date=DATE(), requested_delivery=OPT(DATE()),
    vendor=R("party"), bill_to=R("party"), ship_to=R("party"), currency=CURRENCY(),
    lines=A(O("line sku quantity unit_price", line=I(min=1), sku=S(), description=S(), quantity=I(min=1), uom=E("EA", "BOX", "KG", "L", "M", "HR"),
              unit_price=MONEY), min=1, max=200),
    incoterms=E("EXW", "FCA", "FOB", "CIF", "DAP", "DDP"), payment_terms=S(), approved_by=OPT(S())),
    title="Purchase order", defs={"party": PARTY})

schema("extract_shipping_label", O(
    "carrier tracking_number ship_to", carrier=E("UPS", "FedEx", "USPS", "DHL", "Royal Mail", "Canada Post", "other"),
    tracking_number=S(pat="^[A-Z0-9]{8,34}$"), service=OPT(S()), weight=OPT(O("value unit", value=N(min=0), unit=E("kg", "lb", "oz", "g"))),
    ship_from=OPT(ADDRESS()), ship_to=ADDRESS(), ship_date=OPT(DATE())),
    title="Shipping label extraction")

schema("extract_boarding_pass", O(
    "passenger airline flight_number origin destination departure", passenger=S(), airline=S(pat="^[A-Z0-9]{2}$"),
    flight_number=S(pat="^[0-9]{1,4}[A-Z]?$"), origin=S(pat="^[A-Z]{3}$"), destination=S(pat="^[A-Z]{3}$"), departure=TS(),
    seat=OPT(S(pat="^[0-9]{1,2}[A-K]$")), gate=OPT(S()), boarding_group=OPT(S()), record_locator=OPT(S(pat="^[A-Z0-9]{6}$")),
    cabin=E("economy", "premium_economy", "business", "first")),
    title="Boarding pass extraction")

schema("extract_business_card", O(
    "name", name=S(), title=OPT(S()), company=OPT(S()), emails=A(EMAIL()), phones=A(O("number", number=S(), kind=E("work", "mobile", "fax", "other"))),
    website=OPT(URL()), address=OPT(S()), social=A(O("network handle", network=E("linkedin", "x", "github", "instagram", "other"), handle=S()))),
    title="Business card extraction")

schema("extract_meeting_notes", O(
    "title date attendees decisions action_items", title=S(), date=DATE(), attendees=A(S(), min=1),
    agenda=A(S()), decisions=A(S()), action_items=A(O("owner task", owner=S(), task=S(), due=OPT(DATE()), priority=E("low", "medium", "high"))),
    open_questions=A(S()), next_meeting=OPT(TS())),
    title="Meeting notes")

schema("extract_recipe", O(
    "name ingredients steps", name=S(), cuisine=OPT(S()), servings=I(min=1, max=100), prep_minutes=I(min=0), cook_minutes=I(min=0),
    ingredients=A(O("item", item=S(), quantity=OPT(N(min=0)), unit=OPT(E("g", "kg", "ml", "l", "tsp", "tbsp", "cup", "oz", "lb", "piece", "pinch"))), min=1),
    steps=A(S(), min=1), tags=A(E("vegetarian", "vegan", "gluten_free", "dairy_free", "nut_free", "quick", "dessert", "breakfast")),
    nutrition=OPT(O("", calories=I(min=0), protein_g=N(min=0), fat_g=N(min=0), carbs_g=N(min=0)))),
    title="Recipe extraction")

schema("extract_event_ticket", O(
    "event venue starts_at", event=S(), venue=S(), starts_at=TS(), section=OPT(S()), row=OPT(S()), seat=OPT(S()),
    ticket_type=E("general_admission", "reserved", "vip", "student", "child"), price=OPT(MONEY), currency=OPT(CURRENCY()),
    barcode=OPT(S(pat="^[0-9A-Z]{8,20}$")), holder=OPT(S())),
    title="Event ticket extraction")

schema("extract_w2_form", O(
    "tax_year employer employee wages federal_tax_withheld", tax_year=I(min=2000, max=2100),
    employer=O("ein name", ein=S(pat="^[0-9]{2}-[0-9]{7}$"), name=S(), address=OPT(S())),
    employee=O("ssn_last4 name", ssn_last4=S(pat="^[0-9]{4}$"), name=S(), address=OPT(S())),
    wages=MONEY, federal_tax_withheld=MONEY, social_security_wages=MONEY, social_security_tax=MONEY, medicare_wages=MONEY, medicare_tax=MONEY,
    box12=A(O("code amount", code=S(pat="^[A-HJ-NP-Z]{1,2}$"), amount=MONEY), max=4),
    state=A(O("state wages tax", state=S(pat="^[A-Z]{2}$"), employer_state_id=OPT(S()), wages=MONEY, tax=MONEY), max=2)),
    title="W-2 form extraction")

schema("form_loan_application", O(
    "applicant loan employment", applicant=O("first_name last_name date_of_birth email phone address", first_name=S(), last_name=S(), date_of_birth=DATE(),
                                              email=EMAIL(), phone=PHONE, address=ADDRESS(), years_at_address=I(min=0, max=100),
                                              marital_status=E("single", "married", "separated", "divorced", "widowed")),
    loan=O("purpose amount term_months", purpose=E("home_purchase", "refinance", "auto", "personal", "business", "education"), amount=N(min=1000),
           term_months=I(min=6, max=480), currency=CURRENCY()),
    employment=O("status", status=E("employed", "self_employed", "unemployed", "retired", "student"), employer=OPT(S()), job_title=OPT(S()),
                 annual_income=N(min=0), years_employed=OPT(I(min=0))),
    assets=A(O("kind value", kind=E("checking", "savings", "retirement", "property", "vehicle", "other"), value=N(min=0))),
    liabilities=A(O("kind monthly_payment balance", kind=E("mortgage", "auto_loan", "student_loan", "credit_card", "other"), monthly_payment=N(min=0), balance=N(min=0))),
    consent_credit_check=B()),
    title="Loan application")

schema("form_kyc_individual", O(
    "first_name last_name date_of_birth nationality document", first_name=S(), last_name=S(), date_of_birth=DATE(), nationality=COUNTRY(),
    residence=ADDRESS(), tax_residency=A(O("country tin", country=COUNTRY(), tin=S()), max=3),
    document=O("type number issuing_country expiry_date", type=E("passport", "national_id", "drivers_license", "residence_permit"), number=S(),
               issuing_country=COUNTRY(), expiry_date=DATE()),
    pep=B("Politically exposed person."), source_of_funds=E("salary", "business", "investments", "inheritance", "savings", "other"),
    occupation=S()),
    title="KYC individual onboarding")

schema("form_rental_application", O(
    "applicant property move_in_date", applicant=O("name email phone", name=S(), email=EMAIL(), phone=PHONE, date_of_birth=OPT(DATE())),
    property=O("address", address=S(), unit=OPT(S())), move_in_date=DATE(), lease_months=I(min=1, max=36),
    occupants=A(O("name relationship", name=S(), relationship=S(), age=OPT(I(min=0, max=120)))), pets=A(O("type", type=E("dog", "cat", "bird", "fish", "other"), breed=OPT(S()), weight_kg=OPT(N(min=0)))),
    monthly_income=N(min=0), employer=OPT(S()), previous_landlord=OPT(PERSON), vehicles=A(O("make model plate", make=S(), model=S(), plate=S()), max=3)),
    title="Rental application")

schema("form_return_request", O(
    "order_id items reason", order_id=S(), email=EMAIL(),
    items=A(O("sku quantity", sku=S(), quantity=I(min=1), condition=E("unopened", "opened", "damaged", "defective")), min=1),
    reason=E("wrong_size", "wrong_item", "damaged", "defective", "not_as_described", "no_longer_needed", "other"), comments=OPT(S(max=1000)),
    resolution=E("refund", "exchange", "store_credit"), photos=A(URL(), max=5)),
    title="Return / RMA request")

schema("form_warranty_claim", O(
    "product serial_number purchase_date issue", product=S(), serial_number=S(pat="^[A-Z0-9-]{6,24}$"), purchase_date=DATE(),
    retailer=OPT(S()), issue=S(max=2000), issue_category=E("wont_power_on", "physical_damage", "performance", "noise", "battery", "display", "other"),
    customer=PERSON, shipping_address=ADDRESS()),
    title="Warranty claim")

schema("form_expense_report", O(
    "employee period expenses", employee=O("id name", id=S(), name=S(), department=S()), period=O("start end", start=DATE(), end=DATE()),
    currency=CURRENCY(),
    expenses=A(O("date category amount", date=DATE(), category=E("airfare", "lodging", "meals", "ground_transport", "mileage", "conference", "supplies", "other"),
                 merchant=OPT(S()), amount=MONEY, receipt_attached=B(), billable=B(), project_code=OPT(S(pat="^[A-Z]{2,4}-[0-9]{3,5}$")), notes=OPT(S())), min=1),
    total=MONEY, approver=OPT(EMAIL())),
    title="Expense report")

schema("form_timesheet", O(
    "employee_id week_start entries", employee_id=S(), week_start=DATE(),
    entries=A(O("date hours project", date=DATE(), hours=N(min=0, max=24), project=S(), task=OPT(S()), billable=B()), min=1, max=50),
    submitted=B()), title="Weekly timesheet")

schema("extract_payslip", O(
    "employee pay_period gross net", employee=S(), employer=S(), pay_period=O("start end", start=DATE(), end=DATE()), pay_date=DATE(),
    gross=MONEY, net=MONEY, currency=CURRENCY(),
    earnings=A(O("label amount", label=S(), hours=OPT(N(min=0)), rate=OPT(MONEY), amount=MONEY)),
    deductions=A(O("label amount", label=S(), amount=MONEY, pre_tax=B())), ytd_gross=OPT(MONEY)),
    title="Payslip extraction")

schema("extract_contract_parties", O(
    "contract_type parties effective_date", contract_type=E("nda", "msa", "sow", "employment", "lease", "license", "purchase", "other"),
    parties=A(O("name role", name=S(), role=E("client", "vendor", "employer", "employee", "landlord", "tenant", "licensor", "licensee", "other"),
                jurisdiction=OPT(S()), signatory=OPT(S())), min=2),
    effective_date=DATE(), term_months=OPT(I(min=1)), auto_renew=B(), governing_law=OPT(S()), termination_notice_days=OPT(I(min=0)),
    payment_terms=OPT(S()), confidentiality=B()),
    title="Contract key terms")

schema("extract_nda_clauses", O(
    "clauses", clauses=A(O("type text", type=E("definition", "obligations", "exclusions", "term", "return_of_materials", "remedies", "governing_law", "non_solicit", "other"),
                           text=S(), risk=E("low", "medium", "high")), min=1)),
    title="NDA clause classification")

schema("extract_real_estate_listing", O(
    "address price property_type", address=S(), price=N(min=0), currency=CURRENCY(), property_type=E("house", "condo", "townhouse", "apartment", "land", "multi_family"),
    bedrooms=I(min=0, max=50), bathrooms=N(min=0, max=50), area_sqft=I(min=0), lot_sqft=OPT(I(min=0)), year_built=OPT(I(min=1700, max=2100)),
    features=A(S()), hoa_monthly=OPT(N(min=0)), status=E("for_sale", "pending", "sold", "for_rent"), listing_agent=OPT(PERSON)),
    title="Real estate listing extraction")

schema("extract_car_listing", O(
    "make model year price", make=S(), model=S(), trim=OPT(S()), year=I(min=1900, max=2030), price=N(min=0), mileage=OPT(I(min=0)),
    mileage_unit=E("km", "mi"), vin=OPT(S(pat="^[A-HJ-NPR-Z0-9]{17}$")), fuel=E("gasoline", "diesel", "hybrid", "electric", "plugin_hybrid", "other"),
    transmission=E("manual", "automatic", "cvt"), color=OPT(S()), condition=E("new", "used", "certified"), accidents=OPT(I(min=0))),
    title="Car listing extraction")

schema("extract_restaurant_menu", O(
    "restaurant sections", restaurant=S(), currency=OPT(CURRENCY()),
    sections=A(O("name items", name=S(), items=A(O("name price", name=S(), description=OPT(S()), price=MONEY,
                                                    dietary=A(E("V", "VG", "GF", "DF", "N", "S")), spicy_level=OPT(I(min=0, max=3))), min=1)), min=1)),
    title="Restaurant menu extraction")

schema("extract_flight_itinerary", O(
    "booking_reference passengers segments", booking_reference=S(pat="^[A-Z0-9]{6}$"), passengers=A(S(), min=1, max=9),
    segments=A(O("carrier flight_number from to departure arrival", carrier=S(pat="^[A-Z0-9]{2}$"), flight_number=S(), from_=S(pat="^[A-Z]{3}$"), to=S(pat="^[A-Z]{3}$"),
                 departure=TS(), arrival=TS(), cabin=OPT(S()), seat=OPT(S())), min=1, max=12),
    total_price=OPT(MONEY), currency=OPT(CURRENCY())),
    title="Flight itinerary extraction")

schema("extract_hotel_confirmation", O(
    "hotel check_in check_out guest", hotel=S(), address=OPT(S()), confirmation_number=OPT(S()), check_in=DATE(), check_out=DATE(), guest=S(),
    room_type=OPT(S()), guests=I(min=1, max=10), rate_per_night=OPT(MONEY), total=OPT(MONEY), currency=OPT(CURRENCY()),
    cancellation_deadline=OPT(TS()), breakfast_included=B()),
    title="Hotel booking confirmation extraction")

schema("form_incident_report", O(
    "reported_by occurred_at location category severity description", reported_by=PERSON, occurred_at=TS(), location=S(),
    category=E("injury", "near_miss", "property_damage", "security", "environmental", "it_outage"), severity=E("low", "medium", "high", "critical"),
    description=S(), people_involved=A(PERSON), immediate_actions=A(S()), root_cause=OPT(S()), follow_up_required=B()),
    title="Workplace incident report")

schema("form_bug_report", O(
    "title steps_to_reproduce expected actual severity", title=S(max=120), steps_to_reproduce=A(S(), min=1), expected=S(), actual=S(),
    severity=E("blocker", "critical", "major", "minor", "trivial"),
    environment=O("", os=E("windows", "macos", "linux", "ios", "android"), browser=OPT(S()), app_version=S(pat="^[0-9]+\\.[0-9]+\\.[0-9]+$")),
    logs=OPT(S()), screenshots=A(URL())),
    title="Bug report")

schema("form_survey_response", O(
    "respondent_id answers", respondent_id=UUID(), submitted_at=TS(),
    answers=A(O("question_id", question_id=S(pat="^Q[0-9]+$"), choice=OPT(S()), choices=A(S()), rating=OPT(I(min=0, max=10)), text=OPT(S(max=2000))), min=1),
    nps=OPT(I(min=0, max=10))),
    title="Survey response")

schema("extract_support_email_triage", O(
    "intent urgency language summary", intent=E("billing_question", "refund_request", "bug_report", "feature_request", "account_access", "cancellation", "praise", "spam", "other"),
    urgency=E("low", "normal", "high", "urgent"), language=S(pat="^[a-z]{2}$"), summary=S(max=300), customer_email=OPT(EMAIL()),
    order_ids=A(S()), suggested_reply=OPT(S()), needs_human=B()),
    title="Support email triage")

schema("extract_news_article", O(
    "headline published_at entities", headline=S(), byline=OPT(S()), published_at=TS(), source=OPT(S()), section=OPT(S()),
    summary=S(max=1000), entities=A(O("name type", name=S(), type=E("person", "organization", "location", "event", "other"))),
    quotes=A(O("speaker text", speaker=S(), text=S())), topics=A(S(), max=8)),
    title="News article extraction")

schema("extract_paper_metadata", O(
    "title authors year", title=S(), authors=A(O("name", name=S(), affiliation=OPT(S()), orcid=OPT(S(pat="^[0-9]{4}-[0-9]{4}-[0-9]{4}-[0-9]{3}[0-9X]$"))), min=1),
    year=I(min=1900, max=2100), venue=OPT(S()), doi=OPT(S(pat="^10\\.[0-9]{4,9}/[-._;()/:A-Za-z0-9]+$")), arxiv_id=OPT(S(pat="^[0-9]{4}\\.[0-9]{4,5}(v[0-9]+)?$")),
    abstract=OPT(S()), keywords=A(S()), references_count=OPT(I(min=0))),
    title="Scientific paper metadata")

schema("extract_call_transcript_summary", O(
    "call_type participants summary", call_type=E("sales", "support", "interview", "internal", "other"), participants=A(S(), min=1),
    duration_minutes=OPT(I(min=0)), summary=S(), sentiment=E("positive", "neutral", "negative"), topics=A(S()),
    action_items=A(O("owner task", owner=S(), task=S())), objections=A(S()), next_steps=OPT(S())),
    title="Call transcript summary")

schema("extract_vaccination_record", O(
    "person doses", person=O("name date_of_birth", name=S(), date_of_birth=DATE()),
    doses=A(O("vaccine date", vaccine=S(), manufacturer=OPT(S()), lot=OPT(S()), date=DATE(), dose_number=I(min=1, max=10), site=OPT(S())), min=1)),
    title="Vaccination record extraction")

schema("extract_drivers_license", O(
    "full_name license_number date_of_birth expiry_date issuing_region", full_name=S(), license_number=S(pat="^[A-Z0-9-]{5,20}$"), date_of_birth=DATE(),
    issue_date=OPT(DATE()), expiry_date=DATE(), issuing_region=S(), classes=A(S(pat="^[A-Z0-9]{1,3}$")), address=OPT(S()),
    sex=OPT(E("F", "M", "X")), height_cm=OPT(I(min=50, max=250))),
    title="Driver's license extraction")

schema("extract_passport_mrz", O(
    "document_type issuing_country surname given_names passport_number nationality date_of_birth sex expiry_date",
    document_type=C("P"), issuing_country=S(pat="^[A-Z]{3}$"), surname=S(), given_names=S(), passport_number=S(pat="^[A-Z0-9<]{9}$"),
    nationality=S(pat="^[A-Z]{3}$"), date_of_birth=DATE(), sex=E("F", "M", "X"), expiry_date=DATE(), personal_number=OPT(S())),
    title="Passport machine-readable zone")

schema("extract_table_of_contents", O(
    "entries", document_title=OPT(S()), entries=A(R("entry"), min=1)),
    title="Table of contents", d="Nested sections.",
    defs={"entry": O("title", title=S(), page=OPT(I(min=1)), level=I(min=1, max=6), children=A(R("entry")))})

schema("extract_org_chart", R("employee"), title="Organisation chart", d="A manager with direct reports, recursively.",
       defs={"employee": O("name title", name=S(), title=S(), email=OPT(EMAIL()), department=OPT(S()), reports=A(R("employee")))})

schema("extract_bill_of_materials", O(
    "assembly", assembly=R("part")), title="Bill of materials",
    defs={"part": O("part_number description quantity", part_number=S(pat="^[A-Z0-9-]{3,20}$"), description=S(), quantity=N(min=0),
                    unit=E("ea", "kg", "m", "l"), supplier=OPT(S()), components=A(R("part")))})

schema("form_contact_us", O(
    "name email message", name=S(min=1, max=100), email=EMAIL(), company=OPT(S()), topic=E("sales", "support", "partnership", "press", "other"),
    message=S(min=10, max=5000), subscribe=B(default=False)), title="Contact form")

schema("form_newsletter_signup", O("email", email=EMAIL(), first_name=OPT(S()), interests=A(E("product", "engineering", "events", "offers")),
                                   consent=C(True)), title="Newsletter signup")

schema("form_event_registration", ALL(
    R("person"),
    O("ticket", {"first_name": True, "last_name": True, "email": True, "organization": True},
      ticket=E("standard", "student", "speaker", "sponsor"), dietary=A(E("vegetarian", "vegan", "halal", "kosher", "gluten_free", "none")),
      sessions=A(S(pat="^S[0-9]{3}$"), max=10), tshirt_size=E("XS", "S", "M", "L", "XL", "XXL"), agree_code_of_conduct=C(True))),
    title="Conference registration",
    d="allOf: the person fields and the event fields; the second branch names the first's properties so that it can stay closed.",
    defs={"person": O("first_name last_name email", first_name=S(), last_name=S(), email=EMAIL(), organization=OPT(S()), addl=True)})

schema("form_shipping_quote", O(
    "origin destination packages", origin=O("postal_code country", postal_code=S(), country=COUNTRY()),
    destination=O("postal_code country", postal_code=S(), country=COUNTRY(), residential=B()),
    packages=A(O("weight_kg length_cm width_cm height_cm", weight_kg=N(min=0.01, max=70), length_cm=N(min=1), width_cm=N(min=1), height_cm=N(min=1)), min=1, max=50),
    service_level=E("economy", "standard", "express", "overnight"), declared_value=OPT(MONEY)),
    title="Shipping quote request")

schema("extract_customer_feedback", O(
    "category sentiment", category=E("product", "pricing", "support", "onboarding", "performance", "documentation", "other"),
    sentiment=E("positive", "neutral", "negative"), feature_requests=A(S()), bugs=A(S()), churn_risk=E("low", "medium", "high"),
    quote=OPT(S(max=500))), title="Customer feedback tagging")

schema("extract_email_classification", O("label", label=E("primary", "social", "promotions", "updates", "forums", "spam"),
                                          is_phishing=B(), confidence=N(min=0, max=1)), title="Email classification")

schema("extract_key_value_pairs", O("pairs", pairs=A(O("key value", key=S(), value=TYPES("string", "number", "boolean", "null"), page=OPT(I(min=1)))),
                                     ), title="Generic key-value extraction")

schema("extract_yes_no", O("answer", answer=E("yes", "no", "unsure"), reason=S(max=300)), title="Yes/no answer with reason")

schema("extract_table", O("columns rows", columns=A(S(), min=1, max=30), rows=A(A(TYPES("string", "number", "null"), max=30)), caption=OPT(S())),
       title="Table extraction")

schema("extract_timeline", O("events", events=A(O("date description", date=S(pat="^[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?$"), description=S(),
                                                   certainty=E("exact", "approximate")), min=1)),
       title="Timeline extraction")

schema("extract_medication_list", A(O("name", name=S(), dose=OPT(S()), route=OPT(E("oral", "iv", "im", "subcutaneous", "topical", "inhaled")),
                                      frequency=OPT(S()), prn=B()), title="Medication list"),
       title="Medication list extraction")
