"""Payments, commerce, accounting: Stripe, Shopify, PayPal, Square, Adyen, QuickBooks, Xero, Plaid..."""
from dsl import *

META = MAP(S(max=500), "Up to 50 keys of string metadata.")
AMOUNT = I("Amount in the smallest currency unit (cents).", min=0, max=99999999)

schema("stripe_charge_create", O(
    "amount currency", amount=I("Amount in cents.", min=50, max=99999999), currency=S(pat="^[a-z]{3}$"),
    customer=S(pat="^cus_[A-Za-z0-9]+$"), description=S(), metadata=META, receipt_email=EMAIL(),
    shipping=O("address name", address=ADDRESS(), name=S(), phone=S(), carrier=S(), tracking_number=S()),
    source=S(), statement_descriptor=S(max=22), statement_descriptor_suffix=S(max=22), capture=B(default=True),
    application_fee_amount=I(min=0), on_behalf_of=S(), transfer_data=O("destination", destination=S(pat="^acct_[A-Za-z0-9]+$"), amount=I(min=0))),
    title="Stripe create charge", d="Form parameters of POST /v1/charges, written as JSON.")

schema("stripe_payment_intent_create", O(
    "amount currency", amount=AMOUNT, currency=S(pat="^[a-z]{3}$"), automatic_payment_methods=O("enabled", enabled=B(), allow_redirects=E("always", "never")),
    confirm=B(), customer=S(pat="^cus_[A-Za-z0-9]+$"), description=S(max=1000), metadata=META, off_session=ANY(B(), E("one_off", "recurring")),
    payment_method=S(pat="^pm_[A-Za-z0-9]+$"), payment_method_types=A(E("card", "us_bank_account", "sepa_debit", "ideal", "klarna", "affirm", "link")),
    receipt_email=EMAIL(), setup_future_usage=E("off_session", "on_session"), capture_method=E("automatic", "automatic_async", "manual"),
    confirmation_method=E("automatic", "manual"), statement_descriptor=S(max=22), return_url=URL()),
    title="Stripe create PaymentIntent")

schema("stripe_customer", O(
    "id object created livemode", id=S(pat="^cus_[A-Za-z0-9]+$"), object=C("customer"), address=OPT(ADDRESS()),
    balance=I(), created=I(min=0), currency=OPT(S(pat="^[a-z]{3}$")), default_source=OPT(S()), delinquent=B(), description=OPT(S()),
    email=OPT(EMAIL()), invoice_prefix=S(pat="^[A-Z0-9]{3,12}$"), livemode=B(), metadata=META, name=OPT(S()), phone=OPT(S()),
    preferred_locales=A(S()), tax_exempt=E("none", "exempt", "reverse"), test_clock=OPT(S())),
    title="Stripe customer object")

schema("stripe_subscription_create", O(
    "customer items", customer=S(pat="^cus_[A-Za-z0-9]+$"),
    items=A(O("", price=S(pat="^price_[A-Za-z0-9]+$"), quantity=I(min=1), metadata=META), min=1, max=20),
    cancel_at_period_end=B(), collection_method=E("charge_automatically", "send_invoice"), days_until_due=I(min=0),
    default_payment_method=S(), trial_period_days=I(min=0, max=730), trial_end=ANY(C("now"), I(min=0)),
    payment_behavior=E("allow_incomplete", "default_incomplete", "error_if_incomplete", "pending_if_incomplete"),
    proration_behavior=E("always_invoice", "create_prorations", "none"), coupon=S(), metadata=META),
    title="Stripe create subscription")

schema("stripe_checkout_session_create", O(
    "mode", mode=E("payment", "setup", "subscription"), success_url=URL(), cancel_url=URL(), customer=S(), customer_email=EMAIL(),
    client_reference_id=S(max=200),
    line_items=A(O("quantity", price=S(), quantity=I(min=1),
                   price_data=O("currency", currency=S(pat="^[a-z]{3}$"), unit_amount=AMOUNT, product=S(),
                                product_data=O("name", name=S(), description=S(), images=A(URL(), max=8)),
                                recurring=O("interval", interval=E("day", "week", "month", "year"), interval_count=I(min=1))),
                   adjustable_quantity=O("enabled", enabled=B(), minimum=I(min=0), maximum=I(min=1, max=999999))), max=100),
    allow_promotion_codes=B(), billing_address_collection=E("auto", "required"), locale=S(pat="^[a-z]{2}(-[A-Z]{2})?$"),
    payment_method_types=A(S()), expires_at=I(min=0), ui_mode=E("embedded", "hosted"),
    shipping_address_collection=O("allowed_countries", allowed_countries=A(COUNTRY(), min=1)),
    automatic_tax=O("enabled", enabled=B()), metadata=META),
    title="Stripe create Checkout Session")

schema("stripe_price_create", O(
    "currency", currency=S(pat="^[a-z]{3}$"), unit_amount=AMOUNT, product=S(pat="^prod_[A-Za-z0-9]+$"), active=B(), nickname=S(),
    lookup_key=S(max=200), billing_scheme=E("per_unit", "tiered"), tax_behavior=E("exclusive", "inclusive", "unspecified"),
    recurring=O("interval", interval=E("day", "week", "month", "year"), interval_count=I(min=1, max=12), usage_type=E("licensed", "metered")),
    tiers=A(O("up_to", up_to=ANY(C("inf"), I(min=1)), unit_amount=AMOUNT, flat_amount=AMOUNT)), tiers_mode=E("graduated", "volume"),
    metadata=META), title="Stripe create price")

schema("stripe_refund_create", O(
    "", charge=S(pat="^ch_[A-Za-z0-9]+$"), payment_intent=S(pat="^pi_[A-Za-z0-9]+$"), amount=AMOUNT,
    reason=E("duplicate", "fraudulent", "requested_by_customer"), refund_application_fee=B(), reverse_transfer=B(), metadata=META),
    title="Stripe create refund")

schema("stripe_webhook_event", O(
    "id object type created data livemode", id=S(pat="^evt_[A-Za-z0-9]+$"), object=C("event"), api_version=OPT(S(pat="^[0-9]{4}-[0-9]{2}-[0-9]{2}$")),
    created=I(min=0), livemode=B(), pending_webhooks=I(min=0),
    type=E("charge.succeeded", "charge.failed", "charge.refunded", "checkout.session.completed", "customer.created", "customer.subscription.created",
           "customer.subscription.updated", "customer.subscription.deleted", "invoice.paid", "invoice.payment_failed", "payment_intent.succeeded",
           "payment_intent.payment_failed"),
    data=O("object", object=MAP(TYPES("string", "number", "integer", "boolean", "null", "object", "array")), previous_attributes=MAP(TYPES("string", "number", "boolean", "null"))),
    request=O("", id=OPT(S()), idempotency_key=OPT(S()))),
    title="Stripe webhook event envelope")

schema("stripe_invoice_item", O(
    "customer", customer=S(pat="^cus_[A-Za-z0-9]+$"), amount=I(), currency=S(pat="^[a-z]{3}$"), description=S(), invoice=S(),
    period=O("start end", start=I(min=0), end=I(min=0)), price=S(), quantity=I(min=1), discountable=B(), metadata=META),
    title="Stripe create invoice item")

SHOP_MONEY = O("amount currency_code", amount=S(pat="^-?[0-9]+\\.[0-9]{2}$"), currency_code=CURRENCY())

schema("shopify_product", O(
    "title", title=S(max=255), body_html=S(), vendor=S(), product_type=S(max=255), handle=S(pat="^[a-z0-9-]+$"),
    status=E("active", "archived", "draft"), tags=S("Comma-separated tags."), published_scope=E("web", "global"),
    options=A(O("name", name=S(), values=A(S(), min=1)), max=3),
    variants=A(O("price", title=S(), price=S(pat="^[0-9]+\\.[0-9]{2}$"), compare_at_price=OPT(S(pat="^[0-9]+\\.[0-9]{2}$")), sku=S(),
                 barcode=OPT(S()), grams=I(min=0), weight=N(min=0), weight_unit=E("g", "kg", "oz", "lb"),
                 inventory_management=OPT(C("shopify")), inventory_policy=E("deny", "continue"), inventory_quantity=I(),
                 option1=OPT(S()), option2=OPT(S()), option3=OPT(S()), taxable=B(), requires_shipping=B()), max=100),
    images=A(O("src", src=URL(), alt=OPT(S()), position=I(min=1))), metafields_global_title_tag=S(max=70),
    metafields_global_description_tag=S(max=320)),
    title="Shopify product (REST Admin)")

schema("shopify_order", O(
    "id name email created_at currency total_price financial_status line_items",
    id=I(min=1), name=S(pat="^#[0-9]+$"), email=EMAIL(), created_at=TS(), currency=CURRENCY(),
    total_price=S(pat="^[0-9]+\\.[0-9]{2}$"), subtotal_price=S(pat="^[0-9]+\\.[0-9]{2}$"), total_tax=S(pat="^[0-9]+\\.[0-9]{2}$"),
    total_discounts=S(), financial_status=E("pending", "authorized", "partially_paid", "paid", "partially_refunded", "refunded", "voided"),
    fulfillment_status=OPT(E("fulfilled", "partial", "restocked")), note=OPT(S()), tags=S(),
    customer=O("id", id=I(min=1), email=OPT(EMAIL()), first_name=S(), last_name=S(), phone=OPT(S())),
    line_items=A(O("id title quantity price", id=I(min=1), variant_id=OPT(I(min=1)), product_id=OPT(I(min=1)), title=S(), variant_title=OPT(S()),
                   sku=OPT(S()), quantity=I(min=1), price=S(pat="^[0-9]+\\.[0-9]{2}$"), price_set=O("shop_money", shop_money=SHOP_MONEY),
                   taxable=B(), requires_shipping=B(), fulfillable_quantity=I(min=0)), min=1),
    shipping_address=OPT(O("address1 city country_code", first_name=S(), last_name=S(), address1=S(), address2=OPT(S()), city=S(),
                           province=OPT(S()), province_code=OPT(S()), zip=S(), country=S(), country_code=COUNTRY(), phone=OPT(S()))),
    shipping_lines=A(O("title price", title=S(), price=S(), code=S(), source=S())),
    discount_codes=A(O("code amount type", code=S(), amount=S(), type=E("fixed_amount", "percentage", "shipping")))),
    title="Shopify order")

schema("shopify_customer_create", O(
    "", first_name=S(), last_name=S(), email=EMAIL(), phone=S(pat="^\\+[1-9][0-9]{7,14}$"), verified_email=B(), tags=S(), note=S(),
    tax_exempt=B(), send_email_welcome=B(), addresses=A(O("address1 city country", address1=S(), city=S(), province=S(), phone=S(),
                                                       zip=S(), last_name=S(), first_name=S(), country=S())),
    email_marketing_consent=O("state", state=E("subscribed", "not_subscribed", "pending", "unsubscribed"), opt_in_level=E("single_opt_in", "confirmed_opt_in"))),
    title="Shopify create customer")

schema("shopify_fulfillment_create", O(
    "line_items_by_fulfillment_order", line_items_by_fulfillment_order=A(O("fulfillment_order_id", fulfillment_order_id=I(min=1),
                                                                            fulfillment_order_line_items=A(O("id quantity", id=I(min=1), quantity=I(min=1))))),
    notify_customer=B(), tracking_info=O("", number=S(), url=URL(), company=S()), origin_address=O("", address1=S(), city=S(), country_code=COUNTRY())),
    title="Shopify create fulfillment")

schema("shopify_inventory_adjust", O(
    "location_id inventory_item_id available_adjustment", location_id=I(min=1), inventory_item_id=I(min=1),
    available_adjustment=I(min=-100000, max=100000)), title="Shopify adjust inventory level")

schema("paypal_order_create", O(
    "intent purchase_units", intent=E("CAPTURE", "AUTHORIZE"),
    purchase_units=A(O("amount", reference_id=S(max=256), description=S(max=127), custom_id=S(max=127), invoice_id=S(max=127),
                       amount=O("currency_code value", currency_code=CURRENCY(), value=S(pat="^[0-9]{1,10}(\\.[0-9]{1,2})?$"),
                                breakdown=O("", item_total=R("money"), shipping=R("money"), tax_total=R("money"), discount=R("money"))),
                       items=A(O("name quantity unit_amount", name=S(max=127), quantity=S(pat="^[1-9][0-9]{0,9}$"), unit_amount=R("money"),
                                 sku=S(max=127), category=E("DIGITAL_GOODS", "PHYSICAL_GOODS", "DONATION"), description=S(max=127))),
                       shipping=O("", name=O("full_name", full_name=S()), address=O("country_code", address_line_1=S(), admin_area_2=S(),
                                                                                 postal_code=S(), country_code=COUNTRY()))), min=1, max=10),
    payment_source=O("", paypal=O("", experience_context=O("", return_url=URL(), cancel_url=URL(), brand_name=S(),
                                                            user_action=E("CONTINUE", "PAY_NOW"), shipping_preference=E("GET_FROM_FILE", "NO_SHIPPING", "SET_PROVIDED_ADDRESS"))))),
    title="PayPal create order (v2)", defs={"money": O("currency_code value", currency_code=CURRENCY(), value=S(pat="^[0-9]{1,10}(\\.[0-9]{1,2})?$"))})

schema("paypal_payout_batch", O(
    "sender_batch_header items", sender_batch_header=O("sender_batch_id", sender_batch_id=S(max=256), email_subject=S(max=255),
                                                       email_message=S(), recipient_type=E("EMAIL", "PHONE", "PAYPAL_ID")),
    items=A(O("amount receiver", recipient_type=E("EMAIL", "PHONE", "PAYPAL_ID"), amount=O("value currency", value=S(pat="^[0-9]+(\\.[0-9]{2})?$"), currency=CURRENCY()),
              note=S(max=4000), sender_item_id=S(max=63), receiver=S(max=127)), min=1, max=15000)),
    title="PayPal create batch payout")

schema("square_payment_create", O(
    "source_id idempotency_key", source_id=S(), idempotency_key=S(min=1, max=45),
    amount_money=O("amount currency", amount=I(min=0), currency=CURRENCY()), tip_money=O("amount currency", amount=I(min=0), currency=CURRENCY()),
    app_fee_money=O("amount currency", amount=I(min=0), currency=CURRENCY()), autocomplete=B(), order_id=S(), customer_id=S(),
    location_id=S(), reference_id=S(max=40), note=S(max=500), buyer_email_address=EMAIL(),
    billing_address=O("", address_line_1=S(), locality=S(), administrative_district_level_1=S(), postal_code=S(), country=COUNTRY())),
    title="Square create payment")

schema("square_catalog_item", O(
    "type id", type=C("ITEM"), id=S(pat="^#[A-Za-z0-9_-]+$"), present_at_all_locations=B(),
    item_data=O("name", name=S(max=512), description=S(max=4096), abbreviation=S(max=24), category_id=S(), is_taxable=B(),
                product_type=E("REGULAR", "APPOINTMENTS_SERVICE", "EVENT", "DIGITAL"),
                variations=A(O("type id item_variation_data", type=C("ITEM_VARIATION"), id=S(),
                               item_variation_data=O("name pricing_type", name=S(), sku=S(), pricing_type=E("FIXED_PRICING", "VARIABLE_PRICING"),
                                                     price_money=O("amount currency", amount=I(min=0), currency=CURRENCY()))), min=1))),
    title="Square catalog item")

schema("adyen_payment_request", O(
    "amount merchantAccount paymentMethod reference returnUrl", amount=O("currency value", currency=CURRENCY(), value=I(min=0)),
    merchantAccount=S(), reference=S(max=80), returnUrl=URL(), shopperReference=S(min=3, max=256), shopperEmail=EMAIL(),
    shopperIP=S(fmt="ipv4"), countryCode=COUNTRY(), shopperLocale=S(pat="^[a-z]{2}-[A-Z]{2}$"),
    shopperInteraction=E("Ecommerce", "ContAuth", "Moto", "POS"), recurringProcessingModel=E("CardOnFile", "Subscription", "UnscheduledCardOnFile"),
    paymentMethod=O("type", type=S(), encryptedCardNumber=S(), encryptedExpiryMonth=S(), encryptedExpiryYear=S(), encryptedSecurityCode=S(),
                    holderName=S(), storedPaymentMethodId=S()),
    channel=E("iOS", "Android", "Web"), storePaymentMethod=B(), metadata=MAP(S(max=80))),
    title="Adyen /payments request")

schema("braintree_transaction_sale", O(
    "amount", amount=S(pat="^[0-9]+\\.[0-9]{2}$"), payment_method_nonce=S(), payment_method_token=S(), order_id=S(max=255),
    merchant_account_id=S(), customer_id=S(), device_data=S(),
    options=O("", submit_for_settlement=B(), store_in_vault_on_success=B()),
    billing=O("", first_name=S(), last_name=S(), postal_code=S(max=9), country_code_alpha2=COUNTRY())),
    title="Braintree transaction sale")

schema("woocommerce_order", O(
    "payment_method line_items", payment_method=S(), payment_method_title=S(), set_paid=B(), status=E("pending", "processing", "on-hold", "completed", "cancelled", "refunded", "failed"),
    currency=CURRENCY(), customer_id=I(min=0), customer_note=S(),
    billing=O("first_name last_name email", first_name=S(), last_name=S(), company=S(), address_1=S(), address_2=S(), city=S(), state=S(),
              postcode=S(), country=COUNTRY(), email=EMAIL(), phone=S()),
    shipping=O("", first_name=S(), last_name=S(), address_1=S(), city=S(), state=S(), postcode=S(), country=COUNTRY()),
    line_items=A(O("quantity", product_id=I(min=1), variation_id=I(min=0), quantity=I(min=1), sku=S(), total=S()), min=1),
    shipping_lines=A(O("method_id method_title total", method_id=S(), method_title=S(), total=S(pat="^[0-9]+(\\.[0-9]{2})?$"))),
    coupon_lines=A(O("code", code=S())), meta_data=A(O("key value", key=S(), value=S()))),
    title="WooCommerce create order")

schema("woocommerce_product", O(
    "name", name=S(), type=E("simple", "grouped", "external", "variable"), status=E("draft", "pending", "private", "publish"),
    featured=B(), description=S(), short_description=S(), sku=S(), regular_price=S(pat="^[0-9]*(\\.[0-9]{2})?$"), sale_price=S(),
    manage_stock=B(), stock_quantity=OPT(I()), stock_status=E("instock", "outofstock", "onbackorder"), weight=S(),
    dimensions=O("", length=S(), width=S(), height=S()), categories=A(O("id", id=I(min=1))), tags=A(O("", id=I(min=1), name=S())),
    images=A(O("src", src=URL(), alt=S())), attributes=A(O("name options", id=I(min=0), name=S(), visible=B(), variation=B(), options=A(S())))),
    title="WooCommerce create product")

schema("bigcommerce_product", O(
    "name type weight price", name=S(min=1, max=250), type=E("physical", "digital"), sku=S(max=255), description=S(), weight=N(min=0),
    width=N(min=0), depth=N(min=0), height=N(min=0), price=N(min=0), cost_price=N(min=0), sale_price=N(min=0), categories=A(I(min=1)),
    brand_id=I(min=0), inventory_level=I(min=0), inventory_tracking=E("none", "product", "variant"), is_visible=B(), is_featured=B(),
    availability=E("available", "disabled", "preorder"), condition=E("New", "Used", "Refurbished"), search_keywords=S(),
    custom_url=O("url", url=S(pat="^/[a-z0-9/-]*$"), is_customized=B())),
    title="BigCommerce create product")

schema("amazon_sp_order", O(
    "AmazonOrderId PurchaseDate LastUpdateDate OrderStatus", AmazonOrderId=S(pat="^[0-9]{3}-[0-9]{7}-[0-9]{7}$"), SellerOrderId=S(),
    PurchaseDate=TS(), LastUpdateDate=TS(), OrderStatus=E("Pending", "Unshipped", "PartiallyShipped", "Shipped", "Canceled", "Unfulfillable", "InvoiceUnconfirmed", "PendingAvailability"),
    FulfillmentChannel=E("MFN", "AFN"), SalesChannel=S(), ShipServiceLevel=S(), OrderTotal=O("CurrencyCode Amount", CurrencyCode=CURRENCY(), Amount=S(pat="^[0-9]+\\.[0-9]{2}$")),
    NumberOfItemsShipped=I(min=0), NumberOfItemsUnshipped=I(min=0), PaymentMethod=E("COD", "CVS", "Other"), MarketplaceId=S(pat="^[A-Z0-9]{10,14}$"),
    ShipmentServiceLevelCategory=E("Expedited", "FreeEconomy", "NextDay", "SameDay", "SecondDay", "Scheduled", "Standard"),
    IsBusinessOrder=B(), IsPrime=B(), IsPremiumOrder=B(), EarliestShipDate=TS(), LatestShipDate=TS()),
    title="Amazon Selling Partner order")

schema("ebay_inventory_item", O(
    "product availability condition", availability=O("shipToLocationAvailability", shipToLocationAvailability=O("quantity", quantity=I(min=0))),
    condition=E("NEW", "LIKE_NEW", "NEW_OTHER", "USED_EXCELLENT", "USED_GOOD", "USED_ACCEPTABLE", "FOR_PARTS_OR_NOT_WORKING"),
    conditionDescription=S(max=1000),
    product=O("title", title=S(max=80), description=S(max=4000), aspects=MAP(A(S())), brand=S(), mpn=S(), imageUrls=A(URL(), max=24),
              ean=A(S(pat="^[0-9]{13}$")), upc=A(S(pat="^[0-9]{12}$"))),
    packageWeightAndSize=O("", weight=O("value unit", value=N(min=0), unit=E("POUND", "KILOGRAM", "OUNCE", "GRAM")))),
    title="eBay inventory item")

schema("etsy_listing_create", O(
    "quantity title description price who_made when_made taxonomy_id", quantity=I(min=1, max=999), title=S(max=140),
    description=S(), price=N(min=0.2, max=50000), who_made=E("i_did", "someone_else", "collective"),
    when_made=E("made_to_order", "2020_2024", "2010_2019", "2005_2009", "before_2005", "2000_2004", "1990s", "1980s", "1970s"),
    taxonomy_id=I(min=1), shipping_profile_id=I(min=1), materials=A(S(pat="^[a-zA-Z0-9 ]+$"), max=13), tags=A(S(max=20), max=13),
    styles=A(S(), max=2), is_supply=B(), is_customizable=B(), should_auto_renew=B(), type=E("physical", "download", "both")),
    title="Etsy create draft listing")

schema("plaid_transaction", O(
    "transaction_id account_id amount date name pending", transaction_id=S(), account_id=S(), amount=N(), iso_currency_code=OPT(CURRENCY()),
    date=DATE(), authorized_date=OPT(DATE()), name=S(), merchant_name=OPT(S()), pending=B(), pending_transaction_id=OPT(S()),
    payment_channel=E("online", "in store", "other"), category=OPT(A(S())),
    personal_finance_category=OPT(O("primary detailed", primary=S(pat="^[A-Z_]+$"), detailed=S(pat="^[A-Z_]+$"),
                                    confidence_level=E("VERY_HIGH", "HIGH", "MEDIUM", "LOW", "UNKNOWN"))),
    location=O("", address=OPT(S()), city=OPT(S()), region=OPT(S()), postal_code=OPT(S()), country=OPT(S()), lat=OPT(N()), lon=OPT(N())),
    transaction_type=E("digital", "place", "special", "unresolved")),
    title="Plaid transaction")

schema("coinbase_commerce_charge", O(
    "name description pricing_type", name=S(max=100), description=S(max=200), pricing_type=E("no_price", "fixed_price"),
    local_price=O("amount currency", amount=S(pat="^[0-9]+(\\.[0-9]+)?$"), currency=S(pat="^[A-Z]{3,5}$")),
    metadata=MAP(S()), redirect_url=URL(), cancel_url=URL()), title="Coinbase Commerce create charge")

schema("quickbooks_invoice", O(
    "Line CustomerRef", CustomerRef=O("value", value=S(pat="^[0-9]+$"), name=S()), TxnDate=DATE(), DueDate=DATE(), DocNumber=S(max=21),
    Line=A(O("DetailType Amount", DetailType=E("SalesItemLineDetail", "DescriptionOnly", "DiscountLineDetail", "SubTotalLineDetail"),
             Amount=N(min=0), Description=S(max=4000),
             SalesItemLineDetail=O("ItemRef", ItemRef=O("value", value=S(), name=S()), Qty=N(min=0), UnitPrice=N(), TaxCodeRef=O("value", value=S()))), min=1),
    BillEmail=O("Address", Address=EMAIL()), CustomerMemo=O("value", value=S(max=1000)), EmailStatus=E("NotSet", "NeedToSend", "EmailSent"),
    CurrencyRef=O("value", value=CURRENCY()), SalesTermRef=O("value", value=S())),
    title="QuickBooks Online invoice")

schema("xero_invoice", O(
    "Type Contact LineItems", Type=E("ACCREC", "ACCPAY"), Contact=O("", ContactID=UUID(), Name=S()), Date=DATE(), DueDate=DATE(),
    LineAmountTypes=E("Exclusive", "Inclusive", "NoTax"), Reference=S(), CurrencyCode=CURRENCY(), Status=E("DRAFT", "SUBMITTED", "AUTHORISED"),
    LineItems=A(O("Description", Description=S(), Quantity=N(min=0), UnitAmount=N(), AccountCode=S(pat="^[0-9]{3,10}$"), TaxType=S(),
                  ItemCode=S(), DiscountRate=N(min=0, max=100), Tracking=A(O("Name Option", Name=S(), Option=S()), max=2)), min=1),
    BrandingThemeID=UUID(), SentToContact=B(), ExpectedPaymentDate=DATE()),
    title="Xero accounting invoice")

schema("wise_transfer_create", O(
    "targetAccount quoteUuid customerTransactionId", targetAccount=I(min=1), quoteUuid=UUID(), customerTransactionId=UUID(),
    details=O("", reference=S(max=35), transferPurpose=S(), sourceOfFunds=S())), title="Wise create transfer")

schema("klarna_payment_session", O(
    "purchase_country purchase_currency locale order_amount order_lines", purchase_country=COUNTRY(), purchase_currency=CURRENCY(),
    locale=S(pat="^[a-z]{2}-[A-Z]{2}$"), order_amount=I(min=0), order_tax_amount=I(min=0),
    order_lines=A(O("name quantity unit_price total_amount", type=E("physical", "discount", "shipping_fee", "sales_tax", "digital", "gift_card", "store_credit", "surcharge"),
                    reference=S(), name=S(max=255), quantity=I(min=1), quantity_unit=S(max=8), unit_price=I(), tax_rate=I(min=0, max=10000),
                    total_amount=I(), total_discount_amount=I(min=0), total_tax_amount=I(), product_url=URL(), image_url=URL()), min=1, max=1000),
    intent=E("buy", "tokenize", "buy_and_tokenize"), merchant_reference1=S(max=255)),
    title="Klarna create payment session")

schema("paddle_transaction_create", O(
    "items", items=A(O("price_id quantity", price_id=S(pat="^pri_[a-z0-9]{26}$"), quantity=I(min=1)), min=1),
    customer_id=S(pat="^ctm_[a-z0-9]{26}$"), address_id=S(pat="^add_[a-z0-9]{26}$"), currency_code=CURRENCY(),
    collection_mode=E("automatic", "manual"), discount_id=OPT(S()), custom_data=OPT(MAP(S()))), title="Paddle create transaction")

schema("chargebee_subscription", O(
    "subscription_items", subscription_items=A(O("item_price_id", item_price_id=S(), quantity=I(min=1), unit_price=I(min=0),
                                                   billing_cycles=I(min=1)), min=1),
    customer=O("", email=EMAIL(), first_name=S(), last_name=S(), company=S(), locale=S()),
    billing_address=O("", line1=S(), city=S(), state=S(), zip=S(), country=COUNTRY()), coupon_ids=A(S()), start_date=I(min=0),
    trial_end=I(min=0), auto_collection=E("on", "off"), po_number=S(max=100)),
    title="Chargebee create subscription for items")

schema("gumroad_sale_ping", O(
    "sale_id product_id email price", sale_id=S(), sale_timestamp=TS(), product_id=S(), product_name=S(), permalink=S(), email=EMAIL(),
    price=I(min=0), currency=S(pat="^[a-z]{3}$"), quantity=I(min=1), refunded=B(), test=B(), variants=MAP(S()), license_key=S()),
    title="Gumroad sale ping")

schema("razorpay_order_create", O(
    "amount currency", amount=I(min=100), currency=CURRENCY(), receipt=S(max=40), notes=MAP(S(max=256)), partial_payment=B(),
    first_payment_min_amount=I(min=100)), title="Razorpay create order")

schema("mollie_payment_create", O(
    "amount description redirectUrl", amount=O("currency value", currency=CURRENCY(), value=S(pat="^[0-9]+\\.[0-9]{2}$")),
    description=S(max=255), redirectUrl=URL(), cancelUrl=URL(), webhookUrl=URL(), locale=S(pat="^[a-z]{2}_[A-Z]{2}$"),
    method=OPT(E("applepay", "bancontact", "banktransfer", "creditcard", "ideal", "paypal", "klarna")), metadata=MAP(S()),
    sequenceType=E("oneoff", "first", "recurring"), customerId=S(pat="^cst_[A-Za-z0-9]+$")),
    title="Mollie create payment")
