package dev.linkqr.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

// What clients/kotlin/kotlin_test.go hands these tests besides ClientTest's:
// a key with members:read and members:write, and a second member of the
// workspace (role member).
private fun env(name: String): String =
    System.getenv(name) ?: throw IllegalStateException("$name is not set: run these tests through go test ./clients/kotlin")

private val members = LinkqrClient(env("LINKQR_BASE_URL"), env("LINKQR_TOKEN_MEMBERS"))
private val memberId = env("LINKQR_MEMBER_ID")
private val marker = "kt-" + ProcessHandle.current().pid() + "-" + System.nanoTime()

class MembersTest {
    @Test
    fun rolesTheLastAdminAndRemoval() {
        val everyone = members.members.list(limit = 1).toList()
        assertEquals(2, everyone.size, everyone.toString())
        assertEquals(memberId, everyone[0].userId, "newest member first")
        assertEquals("member", everyone[0].role)
        val admin = everyone[1]
        assertEquals("admin", admin.role)
        assertTrue(admin.userId.startsWith("usr_"), admin.userId)

        assertEquals("admin", members.members.update(memberId, role = "admin").role)
        assertEquals("member", members.members.update(memberId, role = "member").role)

        for (e in listOf(
            assertThrows(ProblemException::class.java) { members.members.update(admin.userId, role = "member") },
            assertThrows(ProblemException::class.java) { members.members.remove(admin.userId) }
        )) {
            assertEquals(409, e.status)
            assertEquals("conflict", e.slug)
            assertTrue(e.detail.contains("last admin"), e.detail)
        }
        val bad = assertThrows(ProblemException::class.java) { members.members.update(memberId, role = "owner") }
        assertEquals(422, bad.status)
        assertEquals(listOf("/role"), bad.errors.map { it.pointer })
        val unknown = assertThrows(ProblemException::class.java) { members.members.update("usr_00000000000000000000000000", role = "admin") }
        assertEquals(404, unknown.status)

        members.members.remove(memberId)
        assertEquals(listOf(admin.userId), members.members.list().map { it.userId }.toList())
        assertEquals(404, assertThrows(ProblemException::class.java) { members.members.remove(memberId) }.status)
    }

    @Test
    fun invitationLinkShownOnceThenRevoked() {
        val email = "$marker@example.com"
        val inv = members.invitations.create(email.toUpperCase(), role = "member", idempotencyKey = marker)
        assertTrue(inv.id.startsWith("inv_"), inv.id)
        assertEquals(email, inv.email)
        assertEquals("member", inv.role)
        assertNull(inv.invitedBy, "an operator's key belongs to no user")
        assertTrue(Regex(".*/invitations/[A-Za-z0-9_-]{43}").matches(inv.acceptUrl), inv.acceptUrl)
        assertEquals(inv.acceptUrl, members.invitations.create(email.toUpperCase(), role = "member", idempotencyKey = marker).acceptUrl)

        val listed = members.invitations.list().filter { it.id == inv.id }.toList()
        assertEquals(1, listed.size)
        assertTrue(listed[0].expiresAt.isAfter(listed[0].createdAt))

        val bad = assertThrows(ProblemException::class.java) { members.invitations.create("not an address", role = "member") }
        assertEquals(422, bad.status)
        assertEquals(listOf("/email"), bad.errors.map { it.pointer })

        members.invitations.revoke(inv.id)
        assertTrue(members.invitations.listPage(limit = 100).data.none { it.id == inv.id })
        assertEquals(404, assertThrows(ProblemException::class.java) { members.invitations.revoke(inv.id) }.status)
    }
}
