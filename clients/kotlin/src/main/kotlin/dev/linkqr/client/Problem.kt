package dev.linkqr.client

import com.google.gson.JsonObject
import com.google.gson.JsonParser
import java.net.http.HttpResponse

// schema: Problem
/** An RFC 9457 problem document as the API sends it (parsed, then carried by ProblemException). */
internal data class ProblemBody(
    val type: String,
    val title: String,
    val status: Int,
    val detail: String,
    val instance: String,
    val requestId: String,
    val errors: List<FieldError>?,
    val requiredScope: String?
)

/**
 * ProblemException is an error answered by the API (an RFC 9457 problem
 * document), thrown by every call of LinkqrClient. [slug], the last segment
 * of [type], is the stable name to branch on: "validation-failed",
 * "not-found", "rate-limited", "insufficient-scope", …
 */
class ProblemException(
    /** The HTTP status. */
    val status: Int,
    /** The problem type URI, e.g. https://linkqr.example.com/problems/not-found. */
    val type: String,
    val title: String,
    val detail: String,
    /** The request path. */
    val instance: String?,
    /** The X-Request-Id of the request: quote it to support. */
    val requestId: String?,
    /** Every rejected field (validation-failed), else empty. */
    val errors: List<FieldError>,
    /** The scope the credential lacks (insufficient-scope). */
    val requiredScope: String?,
    /** Seconds from Retry-After (rate-limited, unavailable), when sent. */
    val retryAfter: Long?,
    /** The whole problem document as received. */
    val body: JsonObject
) : RuntimeException("$title ($status): $detail") {
    /** The stable name of the problem: the last path segment of [type]. */
    val slug: String get() = type.substringAfterLast('/')

    internal companion object {
        // Gson fills absent fields with null whatever the Kotlin type says: hence the elvis operators.
        @Suppress("USELESS_ELVIS")
        /** from builds the exception of a failed response, with or without a problem body. */
        fun from(res: HttpResponse<ByteArray>): ProblemException {
            val status = res.statusCode()
            val headers = res.headers()
            val retryAfter = headers.firstValue("Retry-After").orElse(null)?.trim()?.toLongOrNull()
            val requestIdHeader = headers.firstValue("X-Request-Id").orElse(null)
            val json = try {
                JsonParser.parseString(String(res.body(), Charsets.UTF_8)).asJsonObject
            } catch (e: RuntimeException) {
                null
            }
            val p = json?.let {
                try {
                    Json.gson.fromJson(it, ProblemBody::class.java)
                } catch (e: RuntimeException) {
                    null
                }
            }
            if (json == null || p?.type == null) {
                val title = "HTTP $status"
                val body = JsonObject()
                body.addProperty("title", title)
                body.addProperty("status", status)
                return ProblemException(status, "about:blank", title,
                    "the API answered $status without a problem document", null,
                    requestIdHeader, emptyList(), null, retryAfter, body)
            }
            return ProblemException(status, p.type, p.title ?: "HTTP $status", p.detail ?: p.title ?: "HTTP $status",
                p.instance, p.requestId ?: requestIdHeader, p.errors ?: emptyList(), p.requiredScope, retryAfter, json)
        }

        @Suppress("USELESS_ELVIS")
        /** fromJson builds the exception of a problem document carried inside an answer (a bulk item's error). */
        fun fromJson(status: Int, json: JsonObject): ProblemException {
            val p = Json.gson.fromJson(json, ProblemBody::class.java)
            return ProblemException(p.status ?: status, p.type ?: "about:blank", p.title ?: "HTTP $status",
                p.detail ?: p.title ?: "HTTP $status", p.instance, p.requestId, p.errors ?: emptyList(),
                p.requiredScope, null, json)
        }
    }
}
