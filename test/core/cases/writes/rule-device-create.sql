SELECT "fleet"."is_for__device_type"
  FROM "application" "fleet"
  WHERE "fleet"."id" = $1::int4 AND (("fleet"."is_public" OR "fleet"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
    FROM "organization_membership" m
    WHERE m."user" = $2::int4))))
-- params: [1,1]

INSERT INTO "actor" DEFAULT VALUES RETURNING "id"
-- params: []

SELECT "linked"."id"
  FROM "application" "linked"
  WHERE "linked"."id" = $1::int4 AND (("linked"."is_public" OR "linked"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
    FROM "organization_membership" m
    WHERE m."user" = $2::int4))))
-- params: [1,1]

SELECT "linked"."id"
  FROM "device_type" "linked"
  WHERE "linked"."id" = $1::int4 AND (NOT "linked"."is_private")
-- params: [5]

SELECT ("candidate"."belongs_to__application" IN (SELECT fa."id"
    FROM "application" fa
    WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $1::int4)))) IS TRUE AS ok
  FROM json_populate_record(NULL::"device", $2::json) "candidate"
-- params: [1,"{\"belongs_to__application\":1,\"uuid\":\"0123456789abcdef0123456789abcdef\",\"device_name\":\"new-light\",\"is_of__device_type\":5,\"actor\":94}"]

INSERT INTO "device" ("belongs_to__application", "uuid", "device_name", "is_of__device_type", "actor") VALUES ($1::int4, $2::text, $3::text, $4::int4, $5::int4) RETURNING "id"
-- params: [1,"0123456789abcdef0123456789abcdef","new-light",5,94]

SELECT "row"."id"
  FROM "device" "row"
  WHERE "row"."id" = ANY($1::int4[]) AND (NOT EXISTS (SELECT 1
    FROM "device_type" dt JOIN "cpu_architecture" da ON da."id" = dt."is_of__cpu_architecture", "application" a JOIN "device_type" fdt ON fdt."id" = a."is_for__device_type" JOIN "cpu_architecture" fa ON fa."id" = fdt."is_of__cpu_architecture"
    WHERE dt."id" = "row"."is_of__device_type" AND a."id" = "row"."belongs_to__application" AND (da."id" = fa."id" OR (da."slug", fa."slug") IN (($2::text, $3::text), ($4::text, $5::text), ($6::text, $7::text), ($8::text, $9::text)))))
  ORDER BY 1
-- params: [[63],"aarch64","armv7hf","aarch64","rpi","armv7hf","rpi","amd64","i386"]

UPDATE "device" d SET "should_be_running__release" = NULL
  WHERE d."id" = ANY($1::int4[]) AND NOT EXISTS (SELECT 1
    FROM "release" r
    WHERE r."id" = d."should_be_running__release" AND r."belongs_to__application" = d."belongs_to__application")
-- params: [[63]]

SELECT "row"."id"
  FROM "device" "row"
  WHERE "row"."id" = ANY($1::int4[]) AND ("row"."should_be_running__release" IS NOT NULL AND NOT EXISTS (SELECT 1
    FROM "release" r
    WHERE r."id" = "row"."should_be_running__release" AND r."belongs_to__application" = "row"."belongs_to__application"))
  ORDER BY 1
-- params: [[63]]

SELECT "row"."id"
  FROM "device" "row"
  WHERE "row"."id" = ANY($1::int4[]) AND (("row"."belongs_to__application" IN (SELECT fa."id"
    FROM "application" fa
    WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
      FROM "organization_membership" m
      WHERE m."user" = $2::int4)))) IS NOT TRUE)
  ORDER BY 1
-- params: [[63],1]

SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."created_at", "t0"."belongs_to__application", "t0"."belongs_to__user", "t0"."is_managed_by__device", "t0"."actor", "t0"."should_be_running__release", "t0"."device_name", "t0"."is_of__device_type", "t0"."uuid", "t0"."is_running__release", "t0"."note", "t0"."local_id", "t0"."status", "t0"."is_online", "t0"."last_connectivity_event", "t0"."is_connected_to_vpn", "t0"."last_vpn_event", "t0"."ip_address", "t0"."mac_address", "t0"."public_address", "t0"."os_version", "t0"."os_variant", "t0"."supervisor_version", "t0"."should_be_managed_by__supervisor_release", "t0"."is_managed_by__service_instance", "t0"."provisioning_progress", "t0"."provisioning_state", "t0"."download_progress", "t0"."is_web_accessible", "t0"."longitude", "t0"."latitude", "t0"."location", "t0"."custom_longitude", "t0"."custom_latitude", "t0"."logs_channel", "t0"."is_locked_until__date", "t0"."is_accessible_by_support_until__date", "t0"."is_active", "t0"."api_heartbeat_state", "t0"."should_be_operated_by__release", "t0"."should_be_managed_by__release", "t0"."update_status", "t0"."last_update_status_event", "t0"."memory_usage", "t0"."memory_total", "t0"."storage_block_device", "t0"."storage_usage", "t0"."storage_total", "t0"."cpu_temp", "t0"."cpu_usage", "t0"."cpu_id", "t0"."is_undervolted", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (EXISTS (SELECT 1
        FROM "application" fa
        WHERE fa."id" = "t0"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
          FROM "organization_membership" m
          WHERE m."user" = $1::int4)) OR "t0"."belongs_to__user" = $2::int4))) AND ("t0"."id" = $3::int4)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", to_char("t0"."created_at" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "created_at", CASE WHEN "t0"."belongs_to__application" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."belongs_to__application") END AS "belongs_to__application", CASE WHEN "t0"."belongs_to__user" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."belongs_to__user") END AS "belongs_to__user", CASE WHEN "t0"."is_managed_by__device" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."is_managed_by__device") END AS "is_managed_by__device", "t0"."actor" AS "actor", CASE WHEN "t0"."should_be_running__release" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."should_be_running__release") END AS "should_be_running__release", "t0"."device_name" AS "device_name", CASE WHEN "t0"."is_of__device_type" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."is_of__device_type") END AS "is_of__device_type", "t0"."uuid" AS "uuid", CASE WHEN "t0"."is_running__release" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."is_running__release") END AS "is_running__release", "t0"."note" AS "note", "t0"."local_id" AS "local_id", "t0"."status" AS "status", "t0"."is_online" AS "is_online", to_char("t0"."last_connectivity_event" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "last_connectivity_event", "t0"."is_connected_to_vpn" AS "is_connected_to_vpn", to_char("t0"."last_vpn_event" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "last_vpn_event", "t0"."ip_address" AS "ip_address", "t0"."mac_address" AS "mac_address", "t0"."public_address" AS "public_address", "t0"."os_version" AS "os_version", "t0"."os_variant" AS "os_variant", "t0"."supervisor_version" AS "supervisor_version", CASE WHEN "t0"."should_be_managed_by__supervisor_release" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."should_be_managed_by__supervisor_release") END AS "should_be_managed_by__supervisor_release", CASE WHEN "t0"."is_managed_by__service_instance" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."is_managed_by__service_instance") END AS "is_managed_by__service_instance", "t0"."provisioning_progress" AS "provisioning_progress", "t0"."provisioning_state" AS "provisioning_state", "t0"."download_progress" AS "download_progress", "t0"."is_web_accessible" AS "is_web_accessible", "t0"."longitude" AS "longitude", "t0"."latitude" AS "latitude", "t0"."location" AS "location", "t0"."custom_longitude" AS "custom_longitude", "t0"."custom_latitude" AS "custom_latitude", "t0"."logs_channel" AS "logs_channel", to_char("t0"."is_locked_until__date" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "is_locked_until__date", to_char("t0"."is_accessible_by_support_until__date" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "is_accessible_by_support_until__date", "t0"."is_active" AS "is_active", "t0"."api_heartbeat_state" AS "api_heartbeat_state", CASE WHEN "t0"."should_be_operated_by__release" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."should_be_operated_by__release") END AS "should_be_operated_by__release", CASE WHEN "t0"."should_be_managed_by__release" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."should_be_managed_by__release") END AS "should_be_managed_by__release", "t0"."update_status" AS "update_status", to_char("t0"."last_update_status_event" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "last_update_status_event", "t0"."memory_usage" AS "memory_usage", "t0"."memory_total" AS "memory_total", "t0"."storage_block_device" AS "storage_block_device", "t0"."storage_usage" AS "storage_usage", "t0"."storage_total" AS "storage_total", "t0"."cpu_temp" AS "cpu_temp", "t0"."cpu_usage" AS "cpu_usage", "t0"."cpu_id" AS "cpu_id", "t0"."is_undervolted" AS "is_undervolted") AS o)::text AS body
-- params: [1,1,63]
