SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."is_active", "t0"."provisioning_state", "t0"."is_online", "t0"."last_connectivity_event", "t0"."api_heartbeat_state", "t0"."download_progress", "t0"."status", "t0"."provisioning_progress", "t0"."belongs_to__application", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND (CASE WHEN NOT "t0"."is_active" THEN 'inactive' WHEN "t0"."provisioning_state" = 'Post-Provisioning' THEN 'post-provisioning' WHEN NOT "t0"."is_online" AND "t0"."last_connectivity_event" IS NULL AND "t0"."api_heartbeat_state" = 'unknown' THEN 'configuring' WHEN NOT "t0"."is_online" AND "t0"."api_heartbeat_state" IN ('offline', 'unknown') THEN 'disconnected' WHEN "t0"."api_heartbeat_state" IN ('online', 'timeout') AND "t0"."download_progress" IS NOT NULL AND "t0"."status" = 'Downloading' THEN 'updating' WHEN "t0"."provisioning_progress" IS NOT NULL THEN 'configuring' WHEN "t0"."api_heartbeat_state" = 'timeout' OR ("t0"."is_online" AND "t0"."api_heartbeat_state" <> 'online') OR (NOT "t0"."is_online" AND "t0"."api_heartbeat_state" = 'online' AND coalesce((SELECT dcv."value"
        FROM "device_config_variable" dcv
        WHERE dcv."device" = "t0"."id" AND dcv."name" IN ('BALENA_SUPERVISOR_VPN_CONTROL', 'RESIN_SUPERVISOR_VPN_CONTROL')
        ORDER BY dcv."name"
        LIMIT 1), (SELECT acv."value"
        FROM "application_config_variable" acv
        WHERE acv."application" = "t0"."belongs_to__application" AND acv."name" IN ('BALENA_SUPERVISOR_VPN_CONTROL', 'RESIN_SUPERVISOR_VPN_CONTROL')
        ORDER BY acv."name"
        LIMIT 1), 'not set') <> 'false') THEN 'reduced-functionality' ELSE 'operational' END = ANY($1::text[]))
      ORDER BY "__k0" ASC
      LIMIT 4) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", CASE WHEN NOT "t0"."is_active" THEN 'inactive' WHEN "t0"."provisioning_state" = 'Post-Provisioning' THEN 'post-provisioning' WHEN NOT "t0"."is_online" AND "t0"."last_connectivity_event" IS NULL AND "t0"."api_heartbeat_state" = 'unknown' THEN 'configuring' WHEN NOT "t0"."is_online" AND "t0"."api_heartbeat_state" IN ('offline', 'unknown') THEN 'disconnected' WHEN "t0"."api_heartbeat_state" IN ('online', 'timeout') AND "t0"."download_progress" IS NOT NULL AND "t0"."status" = 'Downloading' THEN 'updating' WHEN "t0"."provisioning_progress" IS NOT NULL THEN 'configuring' WHEN "t0"."api_heartbeat_state" = 'timeout' OR ("t0"."is_online" AND "t0"."api_heartbeat_state" <> 'online') OR (NOT "t0"."is_online" AND "t0"."api_heartbeat_state" = 'online' AND coalesce((SELECT dcv."value"
        FROM "device_config_variable" dcv
        WHERE dcv."device" = "t0"."id" AND dcv."name" IN ('BALENA_SUPERVISOR_VPN_CONTROL', 'RESIN_SUPERVISOR_VPN_CONTROL')
        ORDER BY dcv."name"
        LIMIT 1), (SELECT acv."value"
        FROM "application_config_variable" acv
        WHERE acv."application" = "t0"."belongs_to__application" AND acv."name" IN ('BALENA_SUPERVISOR_VPN_CONTROL', 'RESIN_SUPERVISOR_VPN_CONTROL')
        ORDER BY acv."name"
        LIMIT 1), 'not set') <> 'false') THEN 'reduced-functionality' ELSE 'operational' END AS "overall_status") AS o)::text AS body
-- params: [["operational","disconnected"]]
