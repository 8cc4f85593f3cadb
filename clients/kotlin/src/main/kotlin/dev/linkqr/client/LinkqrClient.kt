package dev.linkqr.client

import com.google.gson.JsonNull
import com.google.gson.JsonObject
import com.google.gson.reflect.TypeToken
import java.lang.reflect.Type
import java.time.Instant

// Every /api/v1 operation has a method below, marked "operation: <operationId>";
// clients/kotlin/models_test.go checks that each operation of
// internal/api/openapi.yaml has one, taking every query parameter and body field.

/**
 * LinkqrClient calls the linkqr API: `LinkqrClient(baseUrl, apiKey)` with an
 * API key, or `LinkqrClient(baseUrl, ClientCredentials(...))` with OAuth.
 * baseUrl is the service's origin (LINKQR_BASE_URL); "/api/v1" is added.
 * Failed calls throw [ProblemException]; network failures throw IOException.
 * Thread-safe.
 */
class LinkqrClient @JvmOverloads constructor(
    baseUrl: String,
    tokens: TokenSource,
    options: ClientOptions = ClientOptions()
) {
    @JvmOverloads
    constructor(baseUrl: String, apiKey: String, options: ClientOptions = ClientOptions()) :
        this(baseUrl, StaticToken(apiKey), options)

    private val t = Transport(baseUrl, tokens, options)

    /** Links, their QR codes, scans and analytics. */
    val links: Links = Links(t)

    /** Webhook subscriptions and their deliveries. */
    val webhooks: WebhookSubscriptions = WebhookSubscriptions(t)

    /** Custom short domains, verified by a DNS TXT record. */
    val domains: Domains = Domains(t)

    /** The workspace's members and their roles. */
    val members: Members = Members(t)

    /** Invitations to join the workspace. */
    val invitations: Invitations = Invitations(t)

    /** The workspace's audit log: who changed keys, apps, webhooks, domains, members or settings. */
    val audit: AuditLog = AuditLog(t)

    /** Single sign-on with the workspace's OpenID Connect provider. */
    val sso: SingleSignOn = SingleSignOn(t)

    // operation: getWorkspace
    /** The credential's workspace and scopes (any valid credential). */
    fun workspace(): Workspace = t.json(Workspace::class.java, "GET", "/workspace")

    // operation: updateWorkspace
    /**
     * Sets the IANA time zone analytics are cut in when a request names none
     * (members:write); an unknown zone is a ProblemException validation-failed (422).
     */
    @JvmOverloads
    fun updateWorkspace(timezone: String? = null): Workspace {
        val b = JsonObject()
        if (timezone != null) b.addProperty("timezone", timezone)
        return t.json(Workspace::class.java, "PATCH", "/workspace", body = b)
    }
}

/** pageType is Page<T> for Gson. */
private fun pageOf(item: Class<*>): Type = TypeToken.getParameterized(Page::class.java, item).type

/** pages walks a list page by page, lazily, following next_cursor. */
private fun <T> pages(first: String?, fetch: (String?) -> Page<T>): Sequence<T> = sequence {
    var cursor = first
    while (true) {
        val p = fetch(cursor)
        yieldAll(p.data)
        val next = p.nextCursor
        if (!p.hasMore || next == null) break
        cursor = next
    }
}

/** The PUT body of a QR design: the fields given, null for a removed logo or frame. */
private fun designBody(
    fg: String?, bg: String?, ecc: String?, margin: Int?, modules: String?, logo: String?,
    frame: QRFrameInput?, removeLogo: Boolean, removeFrame: Boolean
): JsonObject {
    val b = JsonObject()
    b.put("fg", fg, false)
    b.put("bg", bg, false)
    b.put("ecc", ecc, false)
    if (margin != null) b.addProperty("margin", margin)
    b.put("modules", modules, false)
    b.put("logo", logo, removeLogo)
    if (removeFrame) {
        b.add("frame", JsonNull.INSTANCE)
    } else if (frame != null) {
        val f = JsonObject()
        f.addProperty("text", frame.text)
        if (frame.color != null) f.addProperty("color", frame.color)
        b.add("frame", f)
    }
    return b
}

private fun JsonObject.put(name: String, value: String?, clear: Boolean) {
    if (value != null) addProperty(name, value) else if (clear) add(name, JsonNull.INSTANCE)
}

/** putJson adds value as JSON (snake_case fields), or null when cleared, else nothing. */
private fun JsonObject.putJson(name: String, value: Any?, clear: Boolean) {
    if (value != null) add(name, Json.gson.toJsonTree(value)) else if (clear) add(name, JsonNull.INSTANCE)
}

/** The query of the list's filters (tag repeated: links carrying every one). */
private fun linkFilters(q: String?, status: String?, domain: String?, tag: List<String>?): List<Pair<String, String?>> =
    listOf("q" to q, "status" to status, "domain" to domain) + (tag ?: emptyList()).map { "tag" to it }

/** Links: create, list, get, re-point, delete; QR codes, scans and analytics of one. */
class Links internal constructor(private val t: Transport) {
    // operation: createLink
    /**
     * Creates a link (links:write). [idempotencyKey] makes a repeated call
     * return the first one's link instead of a second one; default: a fresh
     * key, reused by the client's own retries. [domain] puts it on a
     * verified custom domain of the workspace (null: the default one).
     * [tags] label it; [rules] send matching scans (device, os, country)
     * elsewhere, [split] shares the others out by weight; [password] makes
     * it ask for one; [maxScans] stops it after that many human scans.
     * [utmSource] … [utmContent] are merged into the destination's query at
     * the redirect, replacing parameters of the same name.
     */
    @JvmOverloads
    fun create(
        targetUrl: String,
        title: String? = null,
        code: String? = null,
        expiresAt: Instant? = null,
        idempotencyKey: String? = null,
        domain: String? = null,
        tags: List<String>? = null,
        rules: List<LinkRule>? = null,
        split: List<SplitVariant>? = null,
        password: String? = null,
        maxScans: Long? = null,
        utmSource: String? = null,
        utmMedium: String? = null,
        utmCampaign: String? = null,
        utmTerm: String? = null,
        utmContent: String? = null
    ): Link {
        val b = JsonObject()
        b.addProperty("target_url", targetUrl)
        b.put("title", title, false)
        b.put("code", code, false)
        b.put("expires_at", expiresAt?.toString(), false)
        b.put("domain", domain, false)
        b.putJson("tags", tags, false)
        b.putJson("rules", rules, false)
        b.putJson("split", split, false)
        b.put("password", password, false)
        b.putJson("max_scans", maxScans, false)
        b.put("utm_source", utmSource, false)
        b.put("utm_medium", utmMedium, false)
        b.put("utm_campaign", utmCampaign, false)
        b.put("utm_term", utmTerm, false)
        b.put("utm_content", utmContent, false)
        return t.json(Link::class.java, "POST", "/links", body = b, idempotencyKey = idempotencyKey)
    }

    // operation: createLinks
    /**
     * Creates 1 to 1,000 links in one request (links:write). Without
     * [atomic] each item succeeds or fails on its own (see each
     * [BulkItem]); with atomic = true all are created or none, and a failed
     * item throws a ProblemException. [idempotencyKey] covers the whole request.
     */
    @JvmOverloads
    fun createMany(links: List<LinkInput>, atomic: Boolean? = null, idempotencyKey: String? = null): BulkResult {
        val b = JsonObject()
        b.add("links", Json.gson.toJsonTree(links))
        if (atomic != null) b.addProperty("atomic", atomic)
        return t.json(BulkResult::class.java, "POST", "/links/bulk", body = b, idempotencyKey = idempotencyKey)
    }

    // operation: editLinks
    /**
     * Applies one change to 1 to 1,000 links in one transaction (links:write):
     * [addTags] and [removeTags] are added and removed (never replaced, so
     * edits at once keep each other's tags), [status], [expiresAt]
     * ([clearExpiresAt] removes it). Each id succeeds or fails on its own
     * (see each [BulkEditItem]); with atomic = true any failure throws a
     * ProblemException (422) and nothing changes.
     */
    @JvmOverloads
    fun editMany(
        ids: List<String>,
        addTags: List<String>? = null,
        removeTags: List<String>? = null,
        status: String? = null,
        expiresAt: Instant? = null,
        clearExpiresAt: Boolean = false,
        atomic: Boolean? = null,
        idempotencyKey: String? = null
    ): BulkEditList {
        val b = JsonObject()
        b.add("ids", Json.gson.toJsonTree(ids))
        b.putJson("add_tags", addTags, false)
        b.putJson("remove_tags", removeTags, false)
        b.put("status", status, false)
        b.put("expires_at", expiresAt?.toString(), clearExpiresAt)
        if (atomic != null) b.addProperty("atomic", atomic)
        return t.json(BulkEditList::class.java, "PATCH", "/links/bulk", body = b, idempotencyKey = idempotencyKey)
    }

    // operation: deleteLinks
    /**
     * Deletes 1 to 1,000 links in one transaction (links:write); each item
     * holds the link as it was, or a 404/422 problem. With atomic = true any
     * failure throws a ProblemException (422) and nothing is deleted.
     */
    @JvmOverloads
    fun deleteMany(ids: List<String>, atomic: Boolean? = null, idempotencyKey: String? = null): BulkEditList {
        val query = listOf("ids" to ids.joinToString(","), "atomic" to atomic?.toString())
        return t.json(BulkEditList::class.java, "DELETE", "/links/bulk", query = query, idempotencyKey = idempotencyKey)
    }

    // operation: exportLinks
    /**
     * The links the list's filters find (all without one), newest first, as
     * CSV text with a header row (links:read); [tag] repeated keeps links
     * carrying every one.
     */
    @JvmOverloads
    fun export(q: String? = null, status: String? = null, domain: String? = null, tag: List<String>? = null): String =
        String(t.call("GET", "/links/export", linkFilters(q, status, domain, tag)).body(), Charsets.UTF_8)

    // operation: listTags
    /** Every tag of the workspace by name, with its link count, lazily (links:read). */
    @JvmOverloads
    fun tags(limit: Int? = null, cursor: String? = null): Sequence<Tag> = pages(cursor) { c -> tagsPage(limit, c) }

    // operation: listTags
    /** One page of tags. */
    @JvmOverloads
    fun tagsPage(limit: Int? = null, cursor: String? = null): Page<Tag> =
        t.json(pageOf(Tag::class.java), "GET", "/tags", listOf("limit" to limit?.toString(), "cursor" to cursor))

    // operation: getLink
    fun get(id: String): Link = t.json(Link::class.java, "GET", "/links/" + enc(id))

    // operation: listLinks
    /**
     * Every link, newest first, as a lazy Sequence that fetches the next page
     * when the previous one is used up (links:read). [q] matches title, code
     * or target; [status] is "all", "active", "paused" or "expired";
     * [domain] keeps the links on that custom domain; [tag] the links
     * carrying every tag given.
     */
    @JvmOverloads
    fun list(q: String? = null, status: String? = null, limit: Int? = null, cursor: String? = null, domain: String? = null,
             tag: List<String>? = null): Sequence<Link> =
        pages(cursor) { c -> listPage(q, status, limit, c, domain, tag) }

    // operation: listLinks
    /** One page of links. */
    @JvmOverloads
    fun listPage(q: String? = null, status: String? = null, limit: Int? = null, cursor: String? = null, domain: String? = null,
                 tag: List<String>? = null): Page<Link> =
        t.json(pageOf(Link::class.java), "GET", "/links",
            listOf("limit" to limit?.toString(), "cursor" to cursor) + linkFilters(q, status, domain, tag))

    // operation: updateLink
    /**
     * Changes a link (links:write): a new [targetUrl] re-points it from the
     * next scan on; [status] "paused" or "active"; null leaves a field as it
     * is, and [clearTitle] / [clearExpiresAt] remove the title or expiry.
     * [tags] replaces the link's tags (an empty list removes them all);
     * [rules], [split], [password] and [maxScans] replace those, and the
     * matching clear flags remove them; so do [utmSource] … [utmContent]
     * (each on its own) and [clearUtmSource] … [clearUtmContent].
     */
    @JvmOverloads
    fun update(
        id: String,
        targetUrl: String? = null,
        title: String? = null,
        status: String? = null,
        expiresAt: Instant? = null,
        clearTitle: Boolean = false,
        clearExpiresAt: Boolean = false,
        tags: List<String>? = null,
        rules: List<LinkRule>? = null,
        split: List<SplitVariant>? = null,
        password: String? = null,
        maxScans: Long? = null,
        clearRules: Boolean = false,
        clearSplit: Boolean = false,
        clearPassword: Boolean = false,
        clearMaxScans: Boolean = false,
        utmSource: String? = null,
        utmMedium: String? = null,
        utmCampaign: String? = null,
        utmTerm: String? = null,
        utmContent: String? = null,
        clearUtmSource: Boolean = false,
        clearUtmMedium: Boolean = false,
        clearUtmCampaign: Boolean = false,
        clearUtmTerm: Boolean = false,
        clearUtmContent: Boolean = false
    ): Link {
        val b = JsonObject()
        b.put("target_url", targetUrl, false)
        b.put("title", title, clearTitle)
        b.put("status", status, false)
        b.put("expires_at", expiresAt?.toString(), clearExpiresAt)
        b.putJson("tags", tags, false)
        b.putJson("rules", rules, clearRules)
        b.putJson("split", split, clearSplit)
        b.put("password", password, clearPassword)
        b.putJson("max_scans", maxScans, clearMaxScans)
        b.put("utm_source", utmSource, clearUtmSource)
        b.put("utm_medium", utmMedium, clearUtmMedium)
        b.put("utm_campaign", utmCampaign, clearUtmCampaign)
        b.put("utm_term", utmTerm, clearUtmTerm)
        b.put("utm_content", utmContent, clearUtmContent)
        return t.json(Link::class.java, "PATCH", "/links/" + enc(id), body = b)
    }

    // operation: deleteLink
    /** Deletes a link for good; its code is never reused (links:write). */
    fun delete(id: String) {
        t.call("DELETE", "/links/" + enc(id))
    }

    // operation: getLinkQr
    /**
     * The link's QR code (links:read): PNG bytes, or SVG with format "svg".
     * It encodes the link's shortUrl followed by "?qr=1", so its scans are
     * recorded with source "qr". null parameters take the server's defaults
     * (512 px, margin 4, ecc M, black on white).
     */
    @JvmOverloads
    fun qr(
        id: String,
        format: String? = null,
        size: Int? = null,
        margin: Int? = null,
        ecc: String? = null,
        fg: String? = null,
        bg: String? = null,
        logo: String? = null
    ): ByteArray = t.call("GET", "/links/" + enc(id) + "/qr", listOf("format" to format, "size" to size?.toString(),
        "margin" to margin?.toString(), "ecc" to ecc, "fg" to fg, "bg" to bg, "logo" to logo)).body()

    // operation: getLinkQrDesign
    /** The design the link's QR codes are drawn in: its own, else the workspace default (linkId null) (links:read). */
    fun qrDesign(id: String): QRDesign = t.json(QRDesign::class.java, "GET", "/links/" + enc(id) + "/qr/design")

    // operation: putLinkQrDesign
    /**
     * Gives the link a QR design of its own, laid over its current one
     * (links:write); null leaves a field as it is. [logo] is a
     * data:image/png;base64,… or data:image/jpeg;base64,… URI; [removeLogo] /
     * [removeFrame] take them away. The server proves the design scans first:
     * a ProblemException "qr-unreadable" otherwise, and nothing is saved.
     */
    @JvmOverloads
    fun setQrDesign(
        id: String,
        fg: String? = null,
        bg: String? = null,
        ecc: String? = null,
        margin: Int? = null,
        modules: String? = null,
        logo: String? = null,
        frame: QRFrameInput? = null,
        removeLogo: Boolean = false,
        removeFrame: Boolean = false
    ): QRDesign = t.json(QRDesign::class.java, "PUT", "/links/" + enc(id) + "/qr/design",
        body = designBody(fg, bg, ecc, margin, modules, logo, frame, removeLogo, removeFrame))

    // operation: deleteLinkQrDesign
    /** Removes the link's own QR design: it follows the workspace default again (links:write). */
    fun deleteQrDesign(id: String) {
        t.call("DELETE", "/links/" + enc(id) + "/qr/design")
    }

    // operation: getQrDesign
    /** The workspace's default QR design (links:read). */
    fun defaultQrDesign(): QRDesign = t.json(QRDesign::class.java, "GET", "/qr/design")

    // operation: putQrDesign
    /** Sets the workspace's default QR design, with the rules of [setQrDesign] (links:write). */
    @JvmOverloads
    fun setDefaultQrDesign(
        fg: String? = null,
        bg: String? = null,
        ecc: String? = null,
        margin: Int? = null,
        modules: String? = null,
        logo: String? = null,
        frame: QRFrameInput? = null,
        removeLogo: Boolean = false,
        removeFrame: Boolean = false
    ): QRDesign = t.json(QRDesign::class.java, "PUT", "/qr/design",
        body = designBody(fg, bg, ecc, margin, modules, logo, frame, removeLogo, removeFrame))

    // operation: getLinksQrZip
    /** The QR codes of up to 1,000 links (the list's filters, or ids) as ZIP bytes, each in its own design (links:read). */
    @JvmOverloads
    fun qrZip(
        q: String? = null,
        status: String? = null,
        domain: String? = null,
        tag: List<String>? = null,
        id: List<String>? = null,
        format: String? = null,
        size: Int? = null
    ): ByteArray = t.call("GET", "/links/qr.zip", listOf("q" to q, "status" to status, "domain" to domain, "format" to format,
        "size" to size?.toString()) + (tag ?: emptyList()).map { "tag" to it } + (id ?: emptyList()).map { "id" to it }).body()

    // operation: listLinkScans
    /** Every scan of a link, newest first, lazily (analytics:read). */
    @JvmOverloads
    fun scans(id: String, limit: Int? = null, cursor: String? = null): Sequence<Scan> =
        pages(cursor) { c -> scansPage(id, limit, c) }

    // operation: listLinkScans
    @JvmOverloads
    fun scansPage(id: String, limit: Int? = null, cursor: String? = null): Page<Scan> =
        t.json(pageOf(Scan::class.java), "GET", "/links/" + enc(id) + "/scans",
            listOf("limit" to limit?.toString(), "cursor" to cursor))

    // operation: getLinkAnalytics
    /**
     * Totals, uniques, a series and breakdowns (devices, os, browsers,
     * referrers, countries, sources) of a link's scans in [from, to) (analytics:read),
     * the buckets cut at the local midnights and hours of [timezone] (default: the workspace's).
     */
    @JvmOverloads
    fun analytics(id: String, from: Instant? = null, to: Instant? = null, interval: String? = null, timezone: String? = null): Analytics =
        t.json(Analytics::class.java, "GET", "/links/" + enc(id) + "/analytics",
            listOf("from" to from?.toString(), "to" to to?.toString(), "interval" to interval, "timezone" to timezone))
}

/** Webhook subscriptions: create, list, change, rotate the secret, and the delivery log. */
class WebhookSubscriptions internal constructor(private val t: Transport) {
    // operation: createWebhook
    /** Subscribes [url] to [events]; the answer's secret is shown only here (webhooks:write). */
    @JvmOverloads
    fun create(url: String, events: List<String>, description: String? = null, idempotencyKey: String? = null): WebhookWithSecret {
        val b = JsonObject()
        b.addProperty("url", url)
        b.add("events", Json.gson.toJsonTree(events))
        b.put("description", description, false)
        return t.json(WebhookWithSecret::class.java, "POST", "/webhooks", body = b, idempotencyKey = idempotencyKey)
    }

    // operation: getWebhook
    fun get(id: String): Webhook = t.json(Webhook::class.java, "GET", "/webhooks/" + enc(id))

    // operation: listWebhooks
    /** Every subscription, newest first, lazily (webhooks:read). */
    @JvmOverloads
    fun list(limit: Int? = null, cursor: String? = null): Sequence<Webhook> = pages(cursor) { c -> listPage(limit, c) }

    // operation: listWebhooks
    @JvmOverloads
    fun listPage(limit: Int? = null, cursor: String? = null): Page<Webhook> =
        t.json(pageOf(Webhook::class.java), "GET", "/webhooks", listOf("limit" to limit?.toString(), "cursor" to cursor))

    // operation: updateWebhook
    /** Changes a subscription (webhooks:write); null leaves a field, [clearDescription] removes the note. */
    @JvmOverloads
    fun update(
        id: String,
        url: String? = null,
        events: List<String>? = null,
        description: String? = null,
        status: String? = null,
        clearDescription: Boolean = false
    ): Webhook {
        val b = JsonObject()
        b.put("url", url, false)
        if (events != null) b.add("events", Json.gson.toJsonTree(events))
        b.put("description", description, clearDescription)
        b.put("status", status, false)
        return t.json(Webhook::class.java, "PATCH", "/webhooks/" + enc(id), body = b)
    }

    // operation: deleteWebhook
    fun delete(id: String) {
        t.call("DELETE", "/webhooks/" + enc(id))
    }

    // operation: rotateWebhookSecret
    /** A new signing secret, shown once; the old one keeps signing for 24 h (webhooks:write). */
    @JvmOverloads
    fun rotateSecret(id: String, idempotencyKey: String? = null): WebhookWithSecret =
        t.json(WebhookWithSecret::class.java, "POST", "/webhooks/" + enc(id) + "/rotate-secret", idempotencyKey = idempotencyKey)

    // operation: listWebhookDeliveries
    /** Every delivery attempt of a subscription, newest first, lazily (webhooks:read). */
    @JvmOverloads
    fun deliveries(id: String, limit: Int? = null, cursor: String? = null): Sequence<Delivery> =
        pages(cursor) { c -> deliveriesPage(id, limit, c) }

    // operation: listWebhookDeliveries
    @JvmOverloads
    fun deliveriesPage(id: String, limit: Int? = null, cursor: String? = null): Page<Delivery> =
        t.json(pageOf(Delivery::class.java), "GET", "/webhooks/" + enc(id) + "/deliveries",
            listOf("limit" to limit?.toString(), "cursor" to cursor))

    // operation: testWebhook
    /** Sends a signed ping event to this subscription only; the answer is its pending delivery (webhooks:write). */
    @JvmOverloads
    fun sendTest(id: String, idempotencyKey: String? = null): Delivery =
        t.json(Delivery::class.java, "POST", "/webhooks/" + enc(id) + "/test", idempotencyKey = idempotencyKey)

    // operation: listEvents
    /**
     * One page of the workspace's events (webhooks:read): newest first with [cursor], or
     * oldest first after the event id [after] (continue with after = the page's nextCursor); [types]
     * narrows it; [wait] (seconds, up to 25) long-polls while it would be empty. What
     * `linkqr listen` reads.
     */
    @JvmOverloads
    fun eventsPage(
        limit: Int? = null,
        cursor: String? = null,
        after: String? = null,
        types: List<String>? = null,
        wait: Int? = null
    ): Page<Event> =
        t.json(pageOf(Event::class.java), "GET", "/events",
            listOf("limit" to limit?.toString(), "cursor" to cursor, "after" to after,
                "types" to types?.joinToString(","), "wait" to wait?.toString()))

    /** Every event of the workspace, newest first, lazily (webhooks:read). */
    @JvmOverloads
    fun events(limit: Int? = null, types: List<String>? = null): Sequence<Event> =
        pages(null) { c -> eventsPage(limit, c, types = types) }

    // operation: retryWebhookDelivery
    /** Sends a delivery's event once more, now; the answer is the new attempt (webhooks:write). */
    @JvmOverloads
    fun retryDelivery(id: String, deliveryId: String, idempotencyKey: String? = null): Delivery =
        t.json(Delivery::class.java, "POST", "/webhooks/" + enc(id) + "/deliveries/" + enc(deliveryId) + "/retry",
            idempotencyKey = idempotencyKey)
}

/** Single sign-on: the workspace's OpenID Connect connection and its e-mail domains (members:write). */
class SingleSignOn internal constructor(private val t: Transport) {
    // operation: getSso
    /** The connection; a ProblemException not-found while none is configured. */
    fun get(): SSOConnection = t.json(SSOConnection::class.java, "GET", "/sso")

    // operation: putSso
    /**
     * Replaces the connection; the issuer is discovered now. clientSecret is
     * required the first time, null keeps the stored one; domains left out
     * are removed. required refuses password sign-in at the verified domains
     * (except the break-glass admin).
     */
    @JvmOverloads
    fun put(
        issuer: String,
        clientId: String,
        clientSecret: String? = null,
        defaultRole: String? = null,
        required: Boolean? = null,
        domains: List<String>? = null
    ): SSOConnection {
        val b = JsonObject()
        b.addProperty("issuer", issuer)
        b.addProperty("client_id", clientId)
        b.put("client_secret", clientSecret, false)
        b.put("default_role", defaultRole, false)
        if (required != null) b.addProperty("required", required)
        b.putJson("domains", domains, false)
        return t.json(SSOConnection::class.java, "PUT", "/sso", body = b)
    }

    // operation: verifySsoDomain
    /** Looks the domain's TXT record up now; domain-not-verified says what was found, conflict when another workspace holds it. */
    @JvmOverloads
    fun verifyDomain(domain: String, idempotencyKey: String? = null): SSOConnection =
        t.json(SSOConnection::class.java, "POST", "/sso/domains/" + enc(domain) + "/verify", idempotencyKey = idempotencyKey)
}

/** Custom short domains: add, verify by DNS, set the root and not-found URLs, remove. */
class Domains internal constructor(private val t: Transport) {
    // operation: createDomain
    /** Adds a pending domain; create its verification record, then [verify] (domains:write). */
    @JvmOverloads
    fun create(hostname: String, idempotencyKey: String? = null): Domain {
        val b = JsonObject()
        b.addProperty("hostname", hostname)
        return t.json(Domain::class.java, "POST", "/domains", body = b, idempotencyKey = idempotencyKey)
    }

    // operation: getDomain
    fun get(id: String): Domain = t.json(Domain::class.java, "GET", "/domains/" + enc(id))

    // operation: listDomains
    /** Every domain, newest first, lazily (domains:read). */
    @JvmOverloads
    fun list(limit: Int? = null, cursor: String? = null): Sequence<Domain> = pages(cursor) { c -> listPage(limit, c) }

    // operation: listDomains
    @JvmOverloads
    fun listPage(limit: Int? = null, cursor: String? = null): Page<Domain> =
        t.json(pageOf(Domain::class.java), "GET", "/domains", listOf("limit" to limit?.toString(), "cursor" to cursor))

    // operation: updateDomain
    /** Sets the root and not-found URLs (domains:write); null leaves one, the clear flags remove it. */
    @JvmOverloads
    fun update(
        id: String,
        rootUrl: String? = null,
        notFoundUrl: String? = null,
        clearRootUrl: Boolean = false,
        clearNotFoundUrl: Boolean = false
    ): Domain {
        val b = JsonObject()
        b.put("root_url", rootUrl, clearRootUrl)
        b.put("not_found_url", notFoundUrl, clearNotFoundUrl)
        return t.json(Domain::class.java, "PATCH", "/domains/" + enc(id), body = b)
    }

    // operation: verifyDomain
    /** Looks the TXT record up now; a ProblemException domain-not-verified says what was found (domains:write). */
    @JvmOverloads
    fun verify(id: String, idempotencyKey: String? = null): Domain =
        t.json(Domain::class.java, "POST", "/domains/" + enc(id) + "/verify", idempotencyKey = idempotencyKey)

    // operation: deleteDomain
    /** Removes a domain; conflict while links use it (domains:write). */
    fun delete(id: String) {
        t.call("DELETE", "/domains/" + enc(id))
    }
}

/** The workspace's members: list, change a role, remove. */
class Members internal constructor(private val t: Transport) {
    // operation: listMembers
    /** Every member, newest first, lazily (members:read). */
    @JvmOverloads
    fun list(limit: Int? = null, cursor: String? = null): Sequence<Member> = pages(cursor) { c -> listPage(limit, c) }

    // operation: listMembers
    @JvmOverloads
    fun listPage(limit: Int? = null, cursor: String? = null): Page<Member> =
        t.json(pageOf(Member::class.java), "GET", "/members", listOf("limit" to limit?.toString(), "cursor" to cursor))

    // operation: updateMember
    /** Makes a member an admin or a member (members:write); demoting the last admin is a ProblemException conflict (409). */
    fun update(id: String, role: String): Member {
        val b = JsonObject()
        b.addProperty("role", role)
        return t.json(Member::class.java, "PATCH", "/members/" + enc(id), body = b)
    }

    // operation: removeMember
    /**
     * Removes someone from the workspace and revokes the keys, OAuth clients and grants they
     * made for it (members:write); the last admin stays (ProblemException conflict, 409).
     */
    fun remove(id: String) {
        t.call("DELETE", "/members/" + enc(id))
    }
}

/** Invitations to join the workspace: invite, list the open ones, revoke. */
class Invitations internal constructor(private val t: Transport) {
    // operation: createInvitation
    /** Invites [email] as [role] for 14 days (members:write); the answer's acceptUrl is shown only here. */
    @JvmOverloads
    fun create(email: String, role: String, idempotencyKey: String? = null): InvitationWithAcceptUrl {
        val b = JsonObject()
        b.addProperty("email", email)
        b.addProperty("role", role)
        return t.json(InvitationWithAcceptUrl::class.java, "POST", "/invitations", body = b, idempotencyKey = idempotencyKey)
    }

    // operation: listInvitations
    /** Every open invitation, newest first, lazily, without their links (members:write). */
    @JvmOverloads
    fun list(limit: Int? = null, cursor: String? = null): Sequence<Invitation> = pages(cursor) { c -> listPage(limit, c) }

    // operation: listInvitations
    @JvmOverloads
    fun listPage(limit: Int? = null, cursor: String? = null): Page<Invitation> =
        t.json(pageOf(Invitation::class.java), "GET", "/invitations", listOf("limit" to limit?.toString(), "cursor" to cursor))

    // operation: revokeInvitation
    /** Withdraws an open invitation: its link stops working (members:write). */
    fun revoke(id: String) {
        t.call("DELETE", "/invitations/" + enc(id))
    }
}

/** The workspace's audit log (audit:read), append-only and hash-chained. */
class AuditLog internal constructor(private val t: Transport) {
    // operation: listAuditEvents
    /**
     * One page of audit entries, newest first (audit:read). [action] is exact
     * ("webhook.created") or a prefix ending in "." ("webhook."); [since] is
     * inclusive, [until] exclusive.
     */
    @JvmOverloads
    fun listAuditEvents(
        limit: Int? = null,
        cursor: String? = null,
        action: String? = null,
        actorId: String? = null,
        targetId: String? = null,
        since: Instant? = null,
        until: Instant? = null
    ): Page<AuditEvent> =
        t.json(pageOf(AuditEvent::class.java), "GET", "/audit-events",
            listOf("limit" to limit?.toString(), "cursor" to cursor, "action" to action, "actor_id" to actorId,
                "target_id" to targetId, "since" to since?.toString(), "until" to until?.toString()))

    // operation: listAuditEvents
    /** Every audit entry matching the filters, newest first, lazily (audit:read). */
    @JvmOverloads
    fun events(
        limit: Int? = null,
        cursor: String? = null,
        action: String? = null,
        actorId: String? = null,
        targetId: String? = null,
        since: Instant? = null,
        until: Instant? = null
    ): Sequence<AuditEvent> = pages(cursor) { c -> listAuditEvents(limit, c, action, actorId, targetId, since, until) }
}
