package dev.linkqr.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class AuditTest {
    private val baseUrl = System.getenv("LINKQR_BASE_URL") ?: ""
    private val lq = LinkqrClient(baseUrl, System.getenv("LINKQR_TOKEN") ?: "")
    private val audit = LinkqrClient(baseUrl, System.getenv("LINKQR_TOKEN_AUDIT") ?: "")

    @Test
    fun listAuditEventsFiltersPagesAndChains() {
        val hook = lq.webhooks.create(url = "https://93.184.216.34/kt-audit-" + System.nanoTime(), events = listOf("link.created"))
        lq.webhooks.delete(hook.id)
        val page = audit.audit.listAuditEvents(limit = 1, targetId = hook.id)
        assertEquals(listOf("webhook.deleted"), page.data.map { it.action })
        assertTrue(page.hasMore)
        val all = audit.audit.events(limit = 1, targetId = hook.id).toList()
        assertEquals(listOf("webhook.deleted", "webhook.created"), all.map { it.action })
        assertEquals(hook.id, all[1].target.id)
        assertEquals(listOf(null, hook.url), all[1].changes?.get("url"))
        assertEquals(all[1].hash, all[0].prevHash)
        assertEquals(2, audit.audit.listAuditEvents(action = "webhook.", targetId = hook.id).data.size)
        val bad = assertThrows(ProblemException::class.java) { audit.audit.listAuditEvents(action = "nope.") }
        assertEquals(422, bad.status)
        assertEquals(listOf("/query/action"), bad.errors.map { it.pointer })
        val limited = LinkqrClient(baseUrl, System.getenv("LINKQR_TOKEN_LIMITED") ?: "")
        val refused = assertThrows(ProblemException::class.java) { limited.audit.listAuditEvents() }
        assertEquals(403, refused.status)
    }
}
