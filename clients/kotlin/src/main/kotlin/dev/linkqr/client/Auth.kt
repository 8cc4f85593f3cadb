package dev.linkqr.client

import com.google.gson.JsonParser
import java.io.IOException
import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.Clock
import java.time.Duration
import java.time.Instant
import java.util.Base64

/** Where the client's bearer token comes from: an API key, or OAuth client credentials. */
interface TokenSource {
    /** The token to send now. */
    fun token(): String

    /** Whether a refused token may be replaced by fetching a new one (then [invalidate] is called once). */
    val refreshable: Boolean get() = false

    /** Forget the current token; the next [token] fetches a new one. */
    fun invalidate() {}
}

/** An API key (lqk_…) or any fixed bearer token. */
class StaticToken(private val value: String) : TokenSource {
    override fun token(): String = value
}

/** OAuthException is an RFC 6749 error answered by POST /oauth/token (e.g. "invalid_client"). */
class OAuthException(val status: Int, val error: String, val errorDescription: String?) :
    RuntimeException("oauth token: $error" + (if (errorDescription != null) ": $errorDescription" else "") + " ($status)")

/**
 * ClientCredentials fetches access tokens from POST {baseUrl}/oauth/token with
 * the client-credentials grant (HTTP Basic client authentication), caches the
 * token, and fetches a new one [refreshBefore] ahead of its expiry (or when the
 * API refuses it), so calls never carry an expired token. Thread-safe.
 */
class ClientCredentials @JvmOverloads constructor(
    baseUrl: String,
    private val clientId: String,
    private val clientSecret: String,
    /** Space-separated scopes to ask for; null asks for all of the client's. */
    private val scope: String? = null,
    private val refreshBefore: Duration = Duration.ofSeconds(60),
    private val clock: Clock = Clock.systemUTC(),
    private val timeout: Duration = Duration.ofSeconds(30),
    httpClient: HttpClient? = null
) : TokenSource {
    private val endpoint = URI.create(baseUrl.trimEnd('/') + "/oauth/token")
    private val http = httpClient ?: HttpClient.newBuilder().connectTimeout(timeout).build()
    private var current: String? = null
    private var expiresAt: Instant = Instant.MIN

    /** How many tokens this source has fetched (for logging and tests). */
    @Volatile
    var fetches: Int = 0
        private set

    override val refreshable: Boolean get() = true

    @Synchronized
    override fun token(): String {
        val t = current
        if (t != null && clock.instant().isBefore(expiresAt.minus(refreshBefore))) return t
        return fetch()
    }

    @Synchronized
    override fun invalidate() {
        current = null
    }

    private fun fetch(): String {
        val form = StringBuilder("grant_type=client_credentials")
        if (scope != null) form.append("&scope=").append(enc(scope))
        val basic = Base64.getEncoder().encodeToString((enc(clientId) + ":" + enc(clientSecret)).toByteArray(Charsets.UTF_8))
        val req = HttpRequest.newBuilder(endpoint)
            .timeout(timeout)
            .header("Authorization", "Basic $basic")
            .header("Content-Type", "application/x-www-form-urlencoded")
            .header("Accept", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(form.toString()))
            .build()
        val started = clock.instant()
        val res = http.send(req, HttpResponse.BodyHandlers.ofString())
        val body = try {
            JsonParser.parseString(res.body()).asJsonObject
        } catch (e: RuntimeException) {
            throw IOException("oauth token: status ${res.statusCode()}, not JSON", e)
        }
        if (res.statusCode() != 200 || !body.has("access_token")) {
            val desc = body.get("error_description")
            throw OAuthException(res.statusCode(), body.get("error")?.asString ?: "invalid_response",
                if (desc == null || desc.isJsonNull) null else desc.asString)
        }
        val token = body.get("access_token").asString
        val expiresIn = body.get("expires_in")?.asLong ?: 0L
        current = token
        expiresAt = started.plusSeconds(expiresIn)
        fetches++
        return token
    }
}
