import Bus
import Foundation
import Hummingbird
import RideContract
import RideModels
import Wire

/// The dashboard's people: riders and drivers searched (`users.search`), one person's account,
/// rides and reports, and the buttons that suspend and reinstate them (`DashboardRoutes`).
struct DashboardPeople {
    let platform: PlatformCalls

    func register(on routes: RecordedRoutes) {
        routes.on(
            .get, "dashboard/users",
            OpRoute(
                Ops.Users.search, tag: .operators,
                summary: "Riders and drivers, newest first: by a part of the name or phone number, or the id", fill: [:],
                query: ["query", "role", "suspended", "limit"]),
            calling: platform)
        routes.on(
            .get, "dashboard/users/{id}",
            RouteDoc(
                "One person: their account (rating, cancellations, suspension), their last rides and the reports on them", tag: .operators,
                path: ["id": "the user's id"], reply: PersonView.self, "the person", errors: [404],
                op: "\(Ops.Users.get.fullName), \(Ops.Orders.history.fullName), \(Ops.Orders.reports.fullName)")
        ) { _, context in
            let id = try context.parameters.require("id")
            return try JSONBody.response(try await person(id))
        }
    }

    /// The person, their last `rideLimit` rides (as their history shows them) and the reports on their rides.
    func person(_ id: String) async throws -> PersonView {
        let user = try await platform.call(Ops.Users.get, UserIDParams(id: id))
        async let rides = platform.call(Ops.Orders.history, HistoryParams(caller: Caller(user), limit: Self.rideLimit))
        async let reports = platform.call(Ops.Orders.reports, ReportsQuery(limit: Self.rideLimit, userID: user.id))
        return PersonView(user: user, rides: try await rides.rides, reports: try await reports.reports)
    }

    static let rideLimit = 20

    /// The people card's HTML: a search form, the people found, and one person's panel.
    static let card = #"""
          <div class="card" style="grid-column: 1 / 3"><h3>People</h3>
            <form id="people-search"><input id="people-query" placeholder="name, phone or id" maxlength="100">
              <select id="people-role"><option value="">everyone</option><option value="rider">riders</option><option value="driver">drivers</option></select>
              <label><input type="checkbox" id="people-suspended"> suspended only</label> <button type="submit">Search</button></form>
            <table id="people"></table>
            <div id="person"></div>
          </div>
        """#

    /// The people card's script. `#people=<query>` or `#person=<id>` in the page's address opens
    /// with that search or that person (a link an operator can send, and what the tests load).
    static let script = #"""
        const stars = (rating) => rating ? `${rating.average.toFixed(1)} ★ (${rating.count})` : "—";
        const personRow = (u) => `<tr data-person="${escape(u.id)}" data-suspended="${u.suspended_at ? "true" : "false"}">
            <td>${photo(u.photo_url)}${escape(u.name)}</td><td>${escape(u.role)}</td><td>${escape(u.phone_number || "")}</td><td>${stars(u.rating)}</td>
            <td>${u.suspended_at ? `suspended: ${escape(u.suspension_reason || "")}` : "active"}</td>
            <td><button data-open="${escape(u.id)}">Open</button> ${u.suspended_at ? `<button data-reinstate="${escape(u.id)}">Reinstate</button>`
              : `<button data-suspend="${escape(u.id)}">Suspend</button>`}</td></tr>`;
        async function searchPeople() {
          const params = new URLSearchParams({limit: "50"});
          if ($("people-query").value.trim()) params.set("query", $("people-query").value.trim());
          if ($("people-role").value) params.set("role", $("people-role").value);
          if ($("people-suspended").checked) params.set("suspended", "true");
          const response = await fetch(location.origin + "/dashboard/users?" + params, {cache: "no-store", credentials: "same-origin"});
          if (signedOut(response)) return;
          const found = response.ok ? (await response.json()).users : [];
          $("people").innerHTML = found.length === 0 ? "<tr><td>nobody found</td></tr>"
            : "<tr><th>name</th><th>role</th><th>phone</th><th>rating</th><th>account</th><th></th></tr>" + found.map(personRow).join("");
        }
        async function openPerson(id) {
          const response = await fetch(location.origin + `/dashboard/users/${encodeURIComponent(id)}`, {cache: "no-store", credentials: "same-origin"});
          if (signedOut(response)) return;
          if (!response.ok) { $("person").textContent = `not found: ${response.status}`; return; }
          const {user: u, rides, reports} = await response.json();
          const car = u.car ? ` · ${escape([u.car.color, u.car.make, u.car.model].filter(Boolean).join(" "))} (${escape(u.car.license_plate)})` : "";
          $("person").innerHTML = `<div data-person-view="${escape(u.id)}"><h4>${photo(u.photo_url)}${escape(u.name)} · ${escape(u.role)}${car}</h4>
            <div>rating ${stars(u.rating)} · cancellations ${u.cancellations || 0} · ${u.suspended_at ? `suspended since ${new Date(u.suspended_at).toLocaleString()}: ${escape(u.suspension_reason || "")}` : "active"}</div>
            ${u.role === "driver" ? driverApproval(u) : ""}
            <table>${rides.map(({order: o, payment: p}) => `<tr class="ride" data-ride="${escape(o.id)}" data-ride-status="${escape(o.status)}"><td>${escape(o.id)}</td>
              <td>${escape(o.status)}</td><td>${new Date(o.created_at).toLocaleString()}</td><td>${p ? `${(p.amount_cents / 100).toFixed(2)} ${escape(p.currency)}` : ""}</td></tr>`).join("")
              || "<tr><td>no rides</td></tr>"}</table>
            <ul>${reports.map(({report: r}) => `<li class="person-report" data-report="${escape(r.id)}">${escape(r.category)} · ${escape(r.status)} · ${escape(r.text)}</li>`).join("")}</ul></div>`;
        }
        // A driver's documents (each photo opens from the dashboard only) and approval for shifts.
        const driverApproval = (u) => `<div data-approval="${u.approved_at ? "approved" : "pending"}">
            ${u.approved_at ? `approved since ${new Date(u.approved_at).toLocaleString()} <button data-withdraw="${escape(u.id)}">Withdraw approval</button>`
              : `not approved <button data-approve="${escape(u.id)}">Approve</button>`}
            <ul>${(u.documents || []).map((d) => `<li data-document="${escape(d.kind)}" data-expires="${escape(d.expires_on)}">${escape(d.kind)}, valid through
              ${escape(d.expires_on)} · <a href="${escape(d.photo_url)}" target="_blank" rel="noopener">photo</a></li>`).join("") || "<li>no documents uploaded</li>"}</ul></div>`;
        async function setApproval(id, approve) {
          const reason = approve ? "" : prompt("Why is this driver's approval withdrawn?");
          if (!approve && !reason) return;
          const response = await fetch(location.origin + `/dashboard/users/${encodeURIComponent(id)}/${approve ? "approve" : "withdraw-approval"}`, {
            method: "POST", credentials: "same-origin", body: approve ? undefined : JSON.stringify({reason}),
            headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf(), "Idempotency-Key": `${approve ? "approve" : "withdraw"}-${id}-${Date.now()}`}});
          if (!response.ok) { alert(`not done: ${response.status} ${await response.text()}`); return; }
          openPerson(id);
        }
        async function setSuspension(id, suspend) {
          const reason = suspend ? prompt("Why is this account suspended?") : "";
          if (suspend && !reason) return;
          const response = await fetch(location.origin + `/dashboard/users/${encodeURIComponent(id)}/${suspend ? "suspend" : "reinstate"}`, {
            method: "POST", credentials: "same-origin", body: suspend ? JSON.stringify({reason}) : undefined,
            headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf(), "Idempotency-Key": `${suspend ? "suspend" : "reinstate"}-${id}-${Date.now()}`}});
          if (!response.ok) { alert(`not done: ${response.status} ${await response.text()}`); return; }
          searchPeople();
          if ($("person").firstElementChild) openPerson(id);
        }
        $("people-search").addEventListener("submit", (event) => { event.preventDefault(); searchPeople(); });
        document.addEventListener("click", (event) => {
          const data = event.target.dataset || {};
          if (data.open) openPerson(data.open);
          if (data.suspend) setSuspension(data.suspend, true);
          if (data.reinstate) setSuspension(data.reinstate, false);
          if (data.approve) setApproval(data.approve, true);
          if (data.withdraw) setApproval(data.withdraw, false);
        });
        {
          const [key, value] = decodeURIComponent(location.hash.slice(1)).split("=");
          if (key === "people") { $("people-query").value = value || ""; searchPeople(); }
          if (key === "person" && value) openPerson(value);
        }
        """#
}

/// `GET /dashboard/users/{id}`.
@WireModel
struct PersonView: Codable, Sendable {
    var user: User
    /// Their last rides, newest first, with each one's payment.
    var rides: [HistoryRide]
    /// The reports on their rides (filed by them or about them), newest first.
    var reports: [ReportedRide]
}
