package dev.linkqr.client

import java.io.IOException
import java.net.URI
import java.net.URLEncoder
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.Duration
import java.time.Instant
import java.time.ZonedDateTime
import java.time.format.DateTimeFormatter
import java.util.UUID

/** A retry the client is about to make, for logging. [status] is null after a network error. */
data class RetryInfo(
    val attempt: Int,
    val status: Int?,
    val delay: Duration,
    val method: String,
    val url: String,
    val error: IOException?
)

/** How the client talks to linkqr; every field has a sensible default. */
data class ClientOptions(
    /** Retries after the first attempt (0 disables retrying). */
    val maxRetries: Int = 3,
    /** The longest single wait; a longer Retry-After is not waited out, the error is thrown. */
    val maxRetryDelay: Duration = Duration.ofSeconds(30),
    /** Time to open a connection. */
    val connectTimeout: Duration = Duration.ofSeconds(10),
    /** Time for one attempt, from sending to the end of the answer's headers. */
    val requestTimeout: Duration = Duration.ofSeconds(30),
    /** Called before each retry. */
    val onRetry: ((RetryInfo) -> Unit)? = null,
    /** The HttpClient to use (default: one built with connectTimeout). */
    val httpClient: HttpClient? = null
)

/**
 * Transport sends one API call: bearer auth, an Idempotency-Key on every POST
 * (generated when not given, the same on every retry, so the server acts at
 * most once), and bounded retries of 429, 503 and 409 idempotency-key-in-use
 * after Retry-After (or an exponential backoff), and of network errors for
 * GETs and keyed POSTs. An OAuth token refused with 401 is fetched anew once.
 */
internal class Transport(baseUrl: String, private val tokens: TokenSource, private val opts: ClientOptions) {
    private val api = baseUrl.trimEnd('/') + "/api/v1"
    private val http: HttpClient = opts.httpClient
        ?: HttpClient.newBuilder().connectTimeout(opts.connectTimeout).followRedirects(HttpClient.Redirect.NEVER).build()

    /** call sends a request and returns the successful answer, else throws ProblemException (or IOException). */
    fun call(
        method: String,
        path: String,
        query: List<Pair<String, String?>> = emptyList(),
        body: Any? = null,
        idempotencyKey: String? = null
    ): HttpResponse<ByteArray> {
        val res = send(method, path, query, body, idempotencyKey)
        if (res.statusCode() !in 200..299) throw ProblemException.from(res)
        return res
    }

    /** json sends a request and decodes its JSON answer into T. */
    fun <T> json(type: java.lang.reflect.Type, method: String, path: String, query: List<Pair<String, String?>> = emptyList(),
                 body: Any? = null, idempotencyKey: String? = null): T {
        val res = call(method, path, query, body, idempotencyKey)
        return Json.gson.fromJson<T>(String(res.body(), Charsets.UTF_8), type)
    }

    fun send(method: String, path: String, query: List<Pair<String, String?>>, body: Any?, idempotencyKey: String?): HttpResponse<ByteArray> {
        val url = api + path + queryString(query)
        val key = if (method == "POST") idempotencyKey ?: UUID.randomUUID().toString() else null
        val payload = if (body != null) Json.bodies.toJson(body) else null
        var attempt = 0
        var refreshed = false
        while (true) {
            val b = HttpRequest.newBuilder(URI.create(url))
                .timeout(opts.requestTimeout)
                .header("Authorization", "Bearer " + tokens.token())
                .header("Accept", "application/json")
                .header("User-Agent", "linkqr-kotlin/1")
            if (key != null) b.header("Idempotency-Key", key)
            if (payload != null) {
                b.header("Content-Type", "application/json")
                b.method(method, HttpRequest.BodyPublishers.ofString(payload, Charsets.UTF_8))
            } else {
                b.method(method, HttpRequest.BodyPublishers.noBody())
            }
            val res: HttpResponse<ByteArray>
            try {
                res = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray())
            } catch (e: IOException) {
                // Only a request that cannot act twice is repeated blindly.
                if (attempt >= opts.maxRetries || !(method == "GET" || key != null)) throw e
                val delay = backoff(attempt)
                opts.onRetry?.invoke(RetryInfo(attempt + 1, null, delay, method, url, e))
                Thread.sleep(delay.toMillis())
                attempt++
                continue
            }
            if (res.statusCode() == 401 && !refreshed && tokens.refreshable) {
                tokens.invalidate()
                refreshed = true
                continue
            }
            if (attempt >= opts.maxRetries || !retryable(res)) return res
            val delay = retryDelay(res, attempt)
            if (delay > opts.maxRetryDelay) return res
            opts.onRetry?.invoke(RetryInfo(attempt + 1, res.statusCode(), delay, method, url, null))
            Thread.sleep(delay.toMillis())
            attempt++
        }
    }

    private fun retryable(res: HttpResponse<ByteArray>): Boolean {
        val s = res.statusCode()
        if (s == 429 || s == 503) return true
        return s == 409 && String(res.body(), Charsets.UTF_8).contains("/problems/idempotency-key-in-use\"")
    }

    private fun retryDelay(res: HttpResponse<ByteArray>, attempt: Int): Duration {
        val ra = res.headers().firstValue("Retry-After").orElse(null)?.trim()
        if (ra != null) {
            val secs = ra.toLongOrNull()
            if (secs != null && secs >= 0) return Duration.ofSeconds(secs)
            try {
                val at = ZonedDateTime.parse(ra, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant()
                val d = Duration.between(Instant.now(), at)
                return if (d.isNegative) Duration.ZERO else d
            } catch (e: RuntimeException) {
                // not an HTTP date either: back off as without the header
            }
        }
        return backoff(attempt)
    }

    private fun backoff(attempt: Int): Duration = Duration.ofMillis(Math.min(250L shl Math.min(attempt, 5), 8000L))

    private fun queryString(query: List<Pair<String, String?>>): String {
        val parts = query.filter { it.second != null }.map { enc(it.first) + "=" + enc(it.second!!) }
        return if (parts.isEmpty()) "" else "?" + parts.joinToString("&")
    }
}

/** enc percent-encodes a query or form component. */
internal fun enc(s: String): String = URLEncoder.encode(s, "UTF-8").replace("+", "%20")
