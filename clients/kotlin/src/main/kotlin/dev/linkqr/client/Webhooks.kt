package dev.linkqr.client

import com.google.gson.JsonObject
import java.security.MessageDigest
import java.time.Duration
import java.time.Instant
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

/** The data of an event: the link, and the scan for scan.created. */
data class EventData(
    val link: Link?,
    val scan: Scan?,
    /** link.updated: the old values of the fields that changed. */
    val previousAttributes: JsonObject?
)

/** An event as delivered to a webhook: de-duplicate by [id], delivery is at-least-once. */
data class Event(
    val id: String,
    val `object`: String,
    /** "link.created", "link.updated", "link.deleted", "scan.created" or "ping". */
    val type: String,
    val createdAt: Instant,
    val workspaceId: String,
    val data: EventData
)

/** Why a delivery was refused by [Webhooks.constructEvent]. */
enum class SignatureFailure {
    /** No Service-Signature header, or an empty secret. */
    MISSING_HEADER,
    /** The header is not t=<unix>,v1=<hex>[,v1=<hex>]. */
    MALFORMED_HEADER,
    /** t is further than the tolerance from now (a replay, or a wrong clock). */
    TIMESTAMP_OUTSIDE_TOLERANCE,
    /** No v1 signature matches the secret: tampered, or another secret. */
    NO_MATCHING_SIGNATURE,
    /** Genuine, but the body is not an event. */
    INVALID_PAYLOAD
}

/** WebhookSignatureException refuses a delivery, with the [reason]. */
class WebhookSignatureException(val reason: SignatureFailure, message: String) : RuntimeException(message)

/** Verification of linkqr's webhook deliveries (Service-Signature). */
object Webhooks {
    /** The receivers' default: reject a t more than 300 s from now, either way. */
    @JvmField
    val DEFAULT_TOLERANCE: Duration = Duration.ofSeconds(300)

    /**
     * constructEvent verifies a delivery and returns its event: [payload] is
     * the body exactly as received (not re-serialised JSON), [header] the
     * Service-Signature value ("t=<unix>,v1=<hex>[,v1=<hex>]"), [secret] the
     * subscription's whsec_… secret. Any v1 may match — during the 24 h after
     * a rotation linkqr signs with the new and the old secret — and t must be
     * within [tolerance] of [now], in the past or the future, so a captured
     * delivery cannot be replayed later. Throws WebhookSignatureException.
     */
    @JvmStatic
    @JvmOverloads
    fun constructEvent(
        payload: ByteArray,
        header: String?,
        secret: String,
        tolerance: Duration = DEFAULT_TOLERANCE,
        now: Instant = Instant.now()
    ): Event {
        if (header == null || header.isBlank() || secret.length == 0) {
            throw WebhookSignatureException(SignatureFailure.MISSING_HEADER, "no Service-Signature header or no secret")
        }
        var t: String? = null
        val sigs = ArrayList<String>()
        for (part in header.split(',')) {
            val i = part.indexOf('=')
            if (i < 0) throw malformed()
            val k = part.substring(0, i).trim()
            val v = part.substring(i + 1).trim()
            when (k) {
                "t" -> {
                    if (t != null || !Regex("[0-9]{1,12}").matches(v)) throw malformed()
                    t = v
                }
                "v1" -> sigs.add(v)
            }
        }
        val ts = t ?: throw malformed()
        if (sigs.isEmpty()) throw malformed()
        val age = Math.abs(now.epochSecond - ts.toLong())
        if (age > tolerance.seconds) {
            throw WebhookSignatureException(SignatureFailure.TIMESTAMP_OUTSIDE_TOLERANCE,
                "signature time is ${age}s from now, beyond the tolerance of ${tolerance.seconds}s")
        }
        val expected = hmac(secret, ts, payload)
        var ok = false
        for (s in sigs) {
            val got = fromHex(s) ?: continue
            // Check every entry, so the time taken does not say which one matched.
            if (MessageDigest.isEqual(expected, got)) ok = true
        }
        if (!ok) throw WebhookSignatureException(SignatureFailure.NO_MATCHING_SIGNATURE, "no v1 signature matches the secret")
        try {
            val ev = Json.gson.fromJson(String(payload, Charsets.UTF_8), Event::class.java)
            @Suppress("SENSELESS_COMPARISON") // Gson leaves absent fields null
            if (ev?.id == null || ev.type == null) throw IllegalArgumentException("no id or type")
            return ev
        } catch (e: RuntimeException) {
            throw WebhookSignatureException(SignatureFailure.INVALID_PAYLOAD, "the body is not an event: ${e.message}")
        }
    }

    /** constructEvent for a body held as a String (it must be the exact text received). */
    @JvmStatic
    @JvmOverloads
    fun constructEvent(
        payload: String,
        header: String?,
        secret: String,
        tolerance: Duration = DEFAULT_TOLERANCE,
        now: Instant = Instant.now()
    ): Event = constructEvent(payload.toByteArray(Charsets.UTF_8), header, secret, tolerance, now)

    /** sign computes a Service-Signature value as linkqr sends it, for tests of receivers. */
    @JvmStatic
    @JvmOverloads
    fun sign(payload: ByteArray, secret: String, t: Instant = Instant.now()): String =
        "t=${t.epochSecond},v1=" + hmac(secret, t.epochSecond.toString(), payload).joinToString("") { String.format("%02x", it) }

    private fun malformed() =
        WebhookSignatureException(SignatureFailure.MALFORMED_HEADER, "Service-Signature is not t=<unix>,v1=<hex>")

    private fun hmac(secret: String, t: String, payload: ByteArray): ByteArray {
        val mac = Mac.getInstance("HmacSHA256")
        mac.init(SecretKeySpec(secret.toByteArray(Charsets.UTF_8), "HmacSHA256"))
        mac.update((t + ".").toByteArray(Charsets.UTF_8))
        return mac.doFinal(payload)
    }

    private fun fromHex(s: String): ByteArray? {
        if (s.length != 64) return null
        val out = ByteArray(32)
        for (i in 0 until 32) {
            val hi = Character.digit(s[2 * i], 16)
            val lo = Character.digit(s[2 * i + 1], 16)
            if (hi < 0 || lo < 0) return null
            out[i] = (hi * 16 + lo).toByte()
        }
        return out
    }
}
