package dev.linkqr.client

import com.sun.net.httpserver.HttpServer
import java.net.InetSocketAddress
import java.time.Duration
import java.time.Instant
import java.util.concurrent.CopyOnWriteArrayList
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class WebhookTest {
    private class Received(val body: ByteArray, val signature: String)

    private val baseUrl = System.getenv("LINKQR_BASE_URL") ?: throw IllegalStateException("LINKQR_BASE_URL is not set")
    private val lq = LinkqrClient(baseUrl, System.getenv("LINKQR_TOKEN") ?: "")
    private val run = "wh-" + System.nanoTime()

    private fun refused(reason: SignatureFailure, f: () -> Unit) {
        assertEquals(reason, assertThrows(WebhookSignatureException::class.java) { f() }.reason)
    }

    private fun waitFor(received: List<Received>, marker: String): Received {
        val deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos()
        while (true) {
            received.firstOrNull { String(it.body, Charsets.UTF_8).contains(marker) }?.let { return it }
            if (System.nanoTime() > deadline) throw AssertionError("no delivery containing $marker")
            Thread.sleep(50)
        }
    }

    @Test
    fun realDeliveriesVerifyAndTamperedOnesAreRefused() {
        val received = CopyOnWriteArrayList<Received>()
        val server = HttpServer.create(InetSocketAddress("127.0.0.1", 0), 0)
        server.createContext("/hook") { ex ->
            received.add(Received(ex.requestBody.readBytes(), ex.requestHeaders.getFirst("Service-Signature") ?: ""))
            ex.sendResponseHeaders(204, -1)
            ex.close()
        }
        server.start()
        try {
            val hook = lq.webhooks.create("http://127.0.0.1:${server.address.port}/hook", listOf("link.created"), "kt $run")
            assertTrue(hook.secret.startsWith("whsec_"))
            try {
                lq.links.create(targetUrl = "https://example.com/signed", title = "signed $run")
                val first = waitFor(received, "signed $run")
                assertTrue(Regex("t=\\d+,v1=[0-9a-f]{64}").matches(first.signature), first.signature)
                val ev = Webhooks.constructEvent(first.body, first.signature, hook.secret)
                assertEquals("link.created", ev.type)
                assertTrue(ev.id.startsWith("evt_"))
                assertEquals("signed $run", ev.data.link?.title)
                assertEquals(ev, Webhooks.constructEvent(String(first.body, Charsets.UTF_8), first.signature, hook.secret))

                val tampered = String(first.body, Charsets.UTF_8).replace("signed $run", "signed $run!").toByteArray()
                refused(SignatureFailure.NO_MATCHING_SIGNATURE) { Webhooks.constructEvent(tampered, first.signature, hook.secret) }
                refused(SignatureFailure.NO_MATCHING_SIGNATURE) { Webhooks.constructEvent(first.body, first.signature, hook.secret + "x") }
                val t0 = Instant.ofEpochSecond(Regex("t=(\\d+)").find(first.signature)!!.groupValues[1].toLong())
                refused(SignatureFailure.TIMESTAMP_OUTSIDE_TOLERANCE) {
                    Webhooks.constructEvent(first.body, first.signature, hook.secret, now = t0.plusSeconds(301))
                }
                refused(SignatureFailure.TIMESTAMP_OUTSIDE_TOLERANCE) {
                    Webhooks.constructEvent(first.body, first.signature, hook.secret, now = t0.minusSeconds(301))
                }
                Webhooks.constructEvent(first.body, first.signature, hook.secret, now = t0.plusSeconds(299))
                Webhooks.constructEvent(first.body, first.signature, hook.secret, Duration.ofSeconds(10), t0.minusSeconds(10))
                refused(SignatureFailure.MISSING_HEADER) { Webhooks.constructEvent(first.body, null, hook.secret) }
                refused(SignatureFailure.MALFORMED_HEADER) { Webhooks.constructEvent(first.body, "v1=" + "0".repeat(64), hook.secret) }

                // After a rotation both secrets sign, the new one first.
                val rotated = lq.webhooks.rotateSecret(hook.id)
                assertNotEquals(hook.secret, rotated.secret)
                lq.links.create(targetUrl = "https://example.com/rotated", title = "rotated $run")
                val second = waitFor(received, "rotated $run")
                assertTrue(Regex("t=\\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}").matches(second.signature), second.signature)
                assertEquals("rotated $run", Webhooks.constructEvent(second.body, second.signature, rotated.secret).data.link?.title)
                assertEquals("rotated $run", Webhooks.constructEvent(second.body, second.signature, hook.secret).data.link?.title)
                refused(SignatureFailure.NO_MATCHING_SIGNATURE) { Webhooks.constructEvent(second.body, second.signature, "whsec_other") }

                val deliveries = lq.webhooks.deliveries(hook.id).toList()
                assertTrue(deliveries.size >= 2, deliveries.toString())
                val retried = lq.webhooks.retryDelivery(hook.id, deliveries.first().id)
                assertEquals(deliveries.first().eventId, retried.eventId)

                // A test event goes to this endpoint through the normal delivery path, signed like the rest.
                val queued = lq.webhooks.sendTest(hook.id)
                assertEquals("ping", queued.eventType)
                val ping = waitFor(received, "\"type\":\"ping\"")
                assertEquals(queued.eventId, Webhooks.constructEvent(ping.body, ping.signature, hook.secret).id)
            } finally {
                lq.webhooks.delete(hook.id)
            }
        } finally {
            server.stop(0)
        }
    }

    /** A scan.created body whose scan has country (JSON: "\"DE\"" or "null") and source. */
    private fun scanCreated(country: String, source: String): String =
        "{\"id\":\"evt_1\",\"object\":\"event\",\"type\":\"scan.created\",\"created_at\":\"2026-11-27T10:00:01Z\"," +
            "\"workspace_id\":\"ws_1\",\"data\":{\"scan\":{\"object\":\"scan\",\"id\":\"scn_1\",\"link_id\":\"lnk_1\"," +
            "\"occurred_at\":\"2026-11-27T10:00:00.123456789Z\",\"referrer_host\":null,\"device\":\"mobile\",\"os\":\"iOS\"," +
            "\"browser\":\"Safari\",\"bot\":false,\"country\":$country,\"source\":\"$source\"}}}"

    @Test
    fun aScanCreatedEventCarriesCountryAndSource() {
        val at = Instant.ofEpochSecond(1_700_000_000)
        val fromQR = scanCreated("\"DE\"", "qr")
        val scan = Webhooks.constructEvent(fromQR, Webhooks.sign(fromQR.toByteArray(), "whsec_test", at), "whsec_test", now = at).data.scan
        assertEquals("DE", scan?.country)
        assertEquals("qr", scan?.source)
        assertEquals(Instant.parse("2026-11-27T10:00:00.123456789Z"), scan?.occurredAt)

        val shared = scanCreated("null", "link")
        val unknown = Webhooks.constructEvent(shared, Webhooks.sign(shared.toByteArray(), "whsec_test", at), "whsec_test", now = at).data.scan
        assertEquals(null, unknown?.country)
        assertEquals("link", unknown?.source)
    }

    @Test
    fun signAndConstructEventAgree() {
        val body = "{\"id\":\"evt_1\",\"object\":\"event\",\"type\":\"ping\",\"created_at\":\"2026-01-01T00:00:00Z\",\"workspace_id\":\"ws_1\",\"data\":{}}"
        val at = Instant.ofEpochSecond(1_700_000_000)
        val h = Webhooks.sign(body.toByteArray(), "whsec_test", at)
        assertEquals("ping", Webhooks.constructEvent(body, h, "whsec_test", now = at.plusSeconds(100)).type)
        refused(SignatureFailure.NO_MATCHING_SIGNATURE) { Webhooks.constructEvent(body + " ", h, "whsec_test", now = at) }
        val notEvent = "[1]"
        refused(SignatureFailure.INVALID_PAYLOAD) {
            Webhooks.constructEvent(notEvent, Webhooks.sign(notEvent.toByteArray(), "whsec_test", at), "whsec_test", now = at)
        }
    }
}
