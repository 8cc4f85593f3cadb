// The API's objects, written by hand from internal/api/openapi.yaml.
// clients/kotlin/models_test.go checks every class marked "schema:" against
// the document (fields, types, nullability), so the build fails when the
// document changes and this file does not follow. Enumerations are Strings:
// a value added to the API later must not break an older client.
package dev.linkqr.client

import java.time.Instant

// schema: Workspace
/** The workspace a credential acts for, with the credential's scopes. */
data class Workspace(
    val `object`: String,
    val id: String,
    val name: String,
    /** The IANA time zone analytics are cut in when a request names none. */
    val timezone: String,
    val scopes: List<String>
)

// schema: Link
/** A dynamic link: a short code and its current target. */
data class Link(
    val `object`: String,
    val id: String,
    val workspaceId: String,
    val code: String,
    /** The custom domain the code lives on; null: the default short domain. */
    val domain: String?,
    val shortUrl: String,
    val targetUrl: String,
    val title: String?,
    /** The link's tags (at most 10), by name. */
    val tags: List<String>,
    /** "active" or "paused". */
    val status: String,
    val expiresAt: Instant?,
    val scanCount: Long,
    val lastScannedAt: Instant?,
    val createdAt: Instant,
    val updatedAt: Instant,
    /** Targeting rules, the first that matches a scan wins; null: none. */
    val rules: List<LinkRule>?,
    /** An A/B split of the scans no rule took (2 to 5 variants); null: none. */
    val split: List<SplitVariant>?,
    /** Whether the link asks for a password before it redirects (the password is never shown). */
    val passwordProtected: Boolean,
    /** The link stops redirecting after this many human scans; null: no limit. */
    val maxScans: Long?,
    /**
     * UTM parameters, merged into every destination's query at the redirect
     * (replacing parameters of the same name; [targetUrl] stays as given); null: absent.
     */
    val utmSource: String?,
    val utmMedium: String?,
    val utmCampaign: String?,
    val utmTerm: String?,
    val utmContent: String?
)

// schema: LinkRule
/** A targeting rule: scans that match [if] go to [targetUrl]. */
data class LinkRule(
    val `if`: LinkRuleCondition,
    val targetUrl: String
)

// schema: LinkRuleCondition
/** What a rule matches: every given list must contain the scan's value (at least one list). */
data class LinkRuleCondition @JvmOverloads constructor(
    /** Device classes: "mobile", "tablet", "desktop", "bot", "other". */
    val device: List<String>? = null,
    /** Operating system families ("iOS", "Android", …). */
    val os: List<String>? = null,
    /** ISO 3166-1 alpha-2 countries ("DE"). */
    val country: List<String>? = null
)

/** One variant of a link's A/B split: [weight] (1 to 100) parts of the scans go to [targetUrl]. */
data class SplitVariant(
    val targetUrl: String,
    val weight: Int
)

// schema: TagObject
/** A tag of the workspace and how many live links carry it. */
data class Tag(
    val `object`: String,
    val name: String,
    val linkCount: Long
)

/**
 * One link to create with [Links.createMany]: the fields of [Links.create]
 * (null leaves one out).
 */
data class LinkInput @JvmOverloads constructor(
    val targetUrl: String,
    val title: String? = null,
    val code: String? = null,
    val expiresAt: Instant? = null,
    val domain: String? = null,
    val tags: List<String>? = null,
    val rules: List<LinkRule>? = null,
    val split: List<SplitVariant>? = null,
    val password: String? = null,
    val maxScans: Long? = null,
    val utmSource: String? = null,
    val utmMedium: String? = null,
    val utmCampaign: String? = null,
    val utmTerm: String? = null,
    val utmContent: String? = null
)

/** The outcome of a bulk creation: [created] and [failed] counts, and each item's outcome by index. */
data class BulkResult(
    val `object`: String,
    val created: Int,
    val failed: Int,
    val data: List<BulkItem>
)

/** An item of a bulk answer: its status, and the problem when it failed. */
interface BulkOutcome {
    val status: Int
    val error: com.google.gson.JsonObject?

    /** The item's error as a ProblemException (slug, errors, …); null when it succeeded. */
    fun problem(): ProblemException? = error?.let { ProblemException.fromJson(status, it) }
}

/** One item of a bulk creation: status 201 with [link], or 409/422 with [error] (a problem document). */
data class BulkItem(
    /** The item's index in the request's links. */
    val index: Int,
    override val status: Int,
    val link: Link?,
    override val error: com.google.gson.JsonObject?
) : BulkOutcome

/** The outcome of a bulk edit or deletion: one item per id, in the order given. */
data class BulkEditList(
    val `object`: String,
    val data: List<BulkEditItem>
)

/** One id of a bulk edit or deletion: status 200 with [link] (as it is now; as it was, for a deletion), or 404/422 with [error] and nothing done. */
data class BulkEditItem(
    /** The id's index in the request's ids. */
    val index: Int,
    /** The id as given. */
    val id: String,
    override val status: Int,
    val link: Link?,
    override val error: com.google.gson.JsonObject?
) : BulkOutcome

// schema: Scan
/** One recorded scan (or click) of a link's short URL. */
data class Scan(
    val `object`: String,
    val id: String,
    val linkId: String,
    val occurredAt: Instant,
    val referrerHost: String?,
    /** "mobile", "tablet", "desktop", "bot" or "other". */
    val device: String,
    val os: String,
    val browser: String,
    val bot: Boolean,
    /** The visitor's country, ISO 3166-1 alpha-2 ("DE"); null when it could not be told. */
    val country: String?,
    /** "qr" (opened through the ?qr=1 that the link's QR codes encode) or "link". */
    val source: String,
    /** The destination that served it: "rule:<n>", "split:<n>", or null for the link's own targetUrl. */
    val variant: String?
)

// schema: Analytics
/** Aggregates of a link's human scans in [from, to). */
data class Analytics(
    val `object`: String,
    val linkId: String,
    val from: Instant,
    val to: Instant,
    /** "hour", "day", "week" or "month". */
    val interval: String,
    /** The IANA time zone the buckets were cut in. */
    val timezone: String,
    val asOf: Instant,
    val total: Long,
    val unique: Long,
    val bots: Long,
    val series: List<AnalyticsBucket>,
    val devices: List<AnalyticsCount>,
    val os: List<AnalyticsCount>,
    val browsers: List<AnalyticsCount>,
    val referrers: List<AnalyticsCount>,
    /** Every country (key "(unknown)" for scans without one); adds up to [total]. */
    val countries: List<AnalyticsCount>,
    /** Keys "qr" and "link"; adds up to [total]. */
    val sources: List<AnalyticsCount>,
    /** For links with rules or a split: keys "rule:<n>", "split:<n>" and "(default)"; adds up to [total]. */
    val variants: List<AnalyticsCount>?
)

// schema: AnalyticsBucket
/** One time bucket of an analytics series. */
data class AnalyticsBucket(
    val start: Instant,
    val scans: Long,
    val unique: Long
)

// schema: AnalyticsCount
/** Human scans for one value of a breakdown. */
data class AnalyticsCount(
    val key: String,
    val scans: Long
)

// schema: Webhook
/** A webhook subscription (its secret is shown only by create and rotate). */
data class Webhook(
    val `object`: String,
    val id: String,
    val workspaceId: String,
    val url: String,
    val events: List<String>,
    val description: String?,
    /** "enabled" or "disabled". */
    val status: String,
    val createdAt: Instant,
    val updatedAt: Instant
)

// schema: WebhookWithSecret
/** A subscription with its signing secret: the answer of create and rotate-secret only. */
data class WebhookWithSecret(
    val `object`: String,
    val id: String,
    val workspaceId: String,
    val url: String,
    val events: List<String>,
    val description: String?,
    val status: String,
    /** The whsec_… key of Service-Signature; store it now, it is never shown again. */
    val secret: String,
    val createdAt: Instant,
    val updatedAt: Instant
)

// schema: Delivery
/** One attempt to deliver one event to one subscription. */
data class Delivery(
    val `object`: String,
    val id: String,
    val webhookId: String,
    val eventId: String,
    val eventType: String,
    val attempt: Int,
    /** "pending", "succeeded" or "failed". */
    val status: String,
    val responseStatus: Int?,
    val error: String?,
    val durationMs: Long?,
    val createdAt: Instant,
    val nextAttemptAt: Instant?
)

// schema: QRDesign
/** How a link's QR codes are drawn; [linkId] is null for the workspace default (and a link that inherits it). */
data class QRDesign(
    val `object`: String,
    val linkId: String?,
    val fg: String,
    val bg: String,
    /** "L", "M", "Q" or "H" (always H with a logo). */
    val ecc: String,
    val margin: Int,
    /** "square", "dots" or "rounded". */
    val modules: String,
    val logo: QRLogo?,
    val frame: QRFrame?,
    val updatedAt: Instant?
)

// schema: QRLogo
/** The stored logo of a QR design (the server's own PNG). */
data class QRLogo(
    val width: Int,
    val height: Int,
    val bytes: Int
)

// schema: QRFrame
/** A QR design's frame: a border in [color] with [text] below the code. */
data class QRFrame(
    val text: String,
    val color: String
)

/** A frame to set: [color] null takes the design's fg. */
data class QRFrameInput @JvmOverloads constructor(val text: String, val color: String? = null)

// schema: Domain
/** A custom short domain of the workspace. */
data class Domain(
    val `object`: String,
    val id: String,
    val workspaceId: String,
    val hostname: String,
    /** "pending" or "verified". */
    val status: String,
    val verification: DomainVerification,
    val rootUrl: String?,
    val notFoundUrl: String?,
    val verifiedAt: Instant?,
    /** What to point where: the records that send the domain's visitors to the service. */
    val routing: DomainRouting,
    /** The live checks: the TXT record, whether the name leads to the service, the TLS certificate. */
    val checks: DomainChecks,
    val createdAt: Instant,
    val updatedAt: Instant
)

// schema: DomainRouting
/** The records to create; [apex]: the hostname cannot hold a CNAME (an ALIAS stands in). */
data class DomainRouting(
    val apex: Boolean,
    val records: List<DomainRecord>
)

// schema: DomainRecord
/** One DNS record: [type] "CNAME", "ALIAS" (the provider's ALIAS, ANAME or flattening), "A" or "AAAA". */
data class DomainRecord(
    val type: String,
    val name: String,
    val value: String
)

// schema: DomainChecks
/** A domain's live checks, made together. */
data class DomainChecks(
    val verification: DomainCheck,
    val routing: DomainCheck,
    val certificate: DomainCheck
)

// schema: DomainCheck
/** One live check: [state] "ok", "pending", "failed" or "not_applicable"; [checkedAt] null while the first look runs. */
data class DomainCheck(
    val state: String,
    val checkedAt: Instant?,
    val detail: String
)

// schema: DomainVerification
/** The DNS TXT record that proves control of a domain: create it at [name] with [value]. */
data class DomainVerification(
    val type: String,
    val name: String,
    val value: String
)

// schema: SSOConnection
/** The workspace's single sign-on connection (the client secret is never returned). */
data class SSOConnection(
    val `object`: String,
    val issuer: String,
    val clientId: String,
    /** "admin" or "member": the role of people who join by their first sign-in. */
    val defaultRole: String,
    val required: Boolean,
    val domains: List<SSODomain>
)

// schema: SSODomain
/** An e-mail domain of the connection and the TXT record that proves it. */
data class SSODomain(
    val domain: String,
    /** "pending" or "verified". */
    val status: String,
    val verification: DomainVerification
)

// schema: Member
/** One person's membership of the workspace. */
data class Member(
    val `object`: String,
    /** usr_…: the id updateRole and remove take. */
    val userId: String,
    val email: String,
    /** "admin" (every scope) or "member". */
    val role: String,
    val joinedAt: Instant
)

// schema: Inviter
/** Who made an invitation. */
data class Inviter(
    val userId: String,
    val email: String
)

// schema: Invitation
/** An open invitation to join the workspace (never with its link). */
data class Invitation(
    val `object`: String,
    val id: String,
    val email: String,
    /** "admin" or "member". */
    val role: String,
    /** Null for invitations made with an operator's credential, or once the inviter's account is gone. */
    val invitedBy: Inviter?,
    val createdAt: Instant,
    val expiresAt: Instant
)

// schema: InvitationWithAcceptUrl
/** A new invitation with the link that accepts it: the answer of create only. */
data class InvitationWithAcceptUrl(
    val `object`: String,
    val id: String,
    val email: String,
    val role: String,
    val invitedBy: Inviter?,
    val createdAt: Instant,
    val expiresAt: Instant,
    /** The link the invitee opens to join; shown only here (and mailed when the server sends e-mail). */
    val acceptUrl: String
)

// schema: LinkList, ScanList, WebhookList, DeliveryList, DomainList, TagList, MemberList, InvitationList
/** One page of a list, newest first; pass nextCursor as cursor for the next one. */
data class Page<T>(
    val `object`: String,
    val data: List<T>,
    val hasMore: Boolean,
    val nextCursor: String?
)

// schema: ProblemFieldError
/** One rejected input of a validation-failed problem. */
data class FieldError(
    /** JSON pointer to the field ("/target_url") or "/query/<name>". */
    val pointer: String,
    val detail: String
)

/** The fields an audited change set, each as [old, new] (null for none). */
typealias AuditChanges = Map<String, List<Any?>>

// schema: AuditEvent
/** One entry of the workspace's audit log; never holds a secret. */
data class AuditEvent(
    val `object`: String,
    val id: String,
    val action: String,
    val actor: AuditActor,
    val target: AuditTarget,
    val changes: AuditChanges?,
    val ip: String?,
    val userAgent: String?,
    val createdAt: Instant,
    /** Hex SHA-256 of [prevHash] and the entry's canonical JSON. */
    val hash: String,
    val prevHash: String
)

/** Who made an audited change: type user, api_key, oauth_client, operator or system. */
data class AuditActor(
    val type: String,
    val id: String?,
    val userId: String?,
    val email: String?
)

/** What an audited change was made to. */
data class AuditTarget(
    val type: String,
    val id: String
)
