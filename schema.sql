-- MySQL/MariaDB DDL of the audit tables (SPEC section 6).
--
-- This file must match the peewee models in webapp/persistence/models.py exactly: the same tables, columns
-- (names, types, nullability), indexes (names, columns, uniqueness) and foreign key that
-- webapp.db.create_schema creates on MySQL/MariaDB. A test enforces it: it applies this file
-- to a scratch MariaDB database and compares it with the models' schema through
-- information_schema (tests/webapp/persistence/test_schema_sql.py). Change both together.
--
-- Idempotent: every statement is CREATE TABLE IF NOT EXISTS with its indexes inline, or CREATE
-- TRIGGER IF NOT EXISTS (the triggers at the end keep diagnosis_run_text, the runs list's text
-- search, equal to LOWER of every run's question and answer: webapp.persistence.db
-- RUN_TEXT_TRIGGERS), so applying the file twice is harmless. Defaults live in the models (peewee puts none in DDL).
--
--   mariadb -u USER -p DATABASE < schema.sql

CREATE TABLE IF NOT EXISTS `chat_session` (
  `id` INTEGER AUTO_INCREMENT NOT NULL PRIMARY KEY,
  `session_id` VARCHAR(64) NOT NULL,
  `title` VARCHAR(200) NOT NULL,
  `created_at` DATETIME(3) NOT NULL,
  `updated_at` DATETIME(3) NOT NULL,
  `expires_at` DATETIME(3),
  `history_cleared_at` DATETIME(3),
  UNIQUE KEY `chat_session_session_id` (`session_id`),
  KEY `chat_session_updated_at_session_id` (`updated_at`, `session_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `diagnosis_run` (
  `id` INTEGER AUTO_INCREMENT NOT NULL PRIMARY KEY,
  `run_id` VARCHAR(64) NOT NULL,
  `session_id` VARCHAR(64) NOT NULL,
  `agent_flow` VARCHAR(16) NOT NULL,
  `flow` VARCHAR(16) NOT NULL,
  `status` VARCHAR(16) NOT NULL,
  `question` TEXT NOT NULL,
  `answer` LONGTEXT,
  `degraded` BOOL NOT NULL,
  `error_message` TEXT,
  `step_count` INTEGER NOT NULL,
  `tool_count` INTEGER NOT NULL,
  `duration_ms` INTEGER,
  `self_evaluation` LONGTEXT,
  `orchestration_trace` LONGTEXT,
  `feedback` VARCHAR(16),
  `feedback_comment` TEXT,
  `started_at` DATETIME(3) NOT NULL,
  `finished_at` DATETIME(3),
  `lease_owner` VARCHAR(128),
  `lease_expires_at` DATETIME(3),
  `resumes` INTEGER NOT NULL,
  UNIQUE KEY `diagnosis_run_run_id` (`run_id`),
  KEY `diagnosis_run_session_id` (`session_id`),
  KEY `diagnosis_run_session_id_started_at_run_id` (`session_id`, `started_at`, `run_id`),
  KEY `diagnosis_run_started_at_run_id` (`started_at`, `run_id`),
  KEY `diagnosis_run_status_started_at_run_id` (`status`, `started_at`, `run_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `diagnosis_run_text` (
  `run_id` VARCHAR(64) NOT NULL,
  `started_at` DATETIME(3) NOT NULL,
  `question` TEXT NOT NULL,
  `answer` LONGTEXT,
  PRIMARY KEY (`started_at`, `run_id`),
  UNIQUE KEY `diagnosis_run_text_run_id` (`run_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `agent_step` (
  `id` INTEGER AUTO_INCREMENT NOT NULL PRIMARY KEY,
  `run_id` VARCHAR(64) NOT NULL,
  `session_id` VARCHAR(64) NOT NULL,
  `step_index` INTEGER NOT NULL,
  `agent_name` VARCHAR(32) NOT NULL,
  `model` VARCHAR(128) NOT NULL,
  `model_output` LONGTEXT,
  `has_tool_call` BOOL NOT NULL,
  `prompt_tokens` INTEGER NOT NULL,
  `completion_tokens` INTEGER NOT NULL,
  `token_count` INTEGER NOT NULL,
  `attempts` INTEGER NOT NULL,
  `duration_ms` INTEGER,
  `status` VARCHAR(16) NOT NULL,
  `error` TEXT,
  `created_at` DATETIME(3) NOT NULL,
  `model_input` LONGTEXT,
  KEY `agent_step_run_id` (`run_id`),
  KEY `agent_step_session_id` (`session_id`),
  UNIQUE KEY `agent_step_run_id_step_index` (`run_id`, `step_index`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `tool_invocation` (
  `id` INTEGER AUTO_INCREMENT NOT NULL PRIMARY KEY,
  `invocation_id` VARCHAR(64) NOT NULL,
  `run_id` VARCHAR(64) NOT NULL,
  `session_id` VARCHAR(64) NOT NULL,
  `step_id` INTEGER,
  `agent_name` VARCHAR(32) NOT NULL,
  `tool_name` VARCHAR(64) NOT NULL,
  `arguments` LONGTEXT,
  `raw_output` LONGTEXT,
  `status` VARCHAR(16) NOT NULL,
  `error_message` TEXT,
  `duration_ms` INTEGER NOT NULL,
  `retrieval_details` LONGTEXT,
  `evidence_refs` LONGTEXT,
  `created_at` DATETIME(3) NOT NULL,
  UNIQUE KEY `tool_invocation_invocation_id` (`invocation_id`),
  KEY `tool_invocation_run_id` (`run_id`),
  KEY `tool_invocation_session_id` (`session_id`),
  KEY `tool_invocation_step_id` (`step_id`),
  FOREIGN KEY (`step_id`) REFERENCES `agent_step` (`id`) ON DELETE SET NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `run_checkpoint` (
  `id` INTEGER AUTO_INCREMENT NOT NULL PRIMARY KEY,
  `run_id` VARCHAR(64) NOT NULL,
  `step` INTEGER NOT NULL,
  `node` VARCHAR(64) NOT NULL,
  `state` LONGTEXT NOT NULL,
  `updated_at` DATETIME(3) NOT NULL,
  UNIQUE KEY `run_checkpoint_run_id` (`run_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `case_library` (
  `id` INTEGER AUTO_INCREMENT NOT NULL PRIMARY KEY,
  `run_id` VARCHAR(64) NOT NULL,
  `session_id` VARCHAR(64) NOT NULL,
  `question` TEXT NOT NULL,
  `answer` LONGTEXT NOT NULL,
  `created_at` DATETIME(3) NOT NULL,
  UNIQUE KEY `case_library_run_id` (`run_id`),
  KEY `case_library_session_id` (`session_id`),
  KEY `case_library_created_at_run_id` (`created_at`, `run_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `alert_record` (
  `id` INTEGER AUTO_INCREMENT NOT NULL PRIMARY KEY,
  `fingerprint` VARCHAR(64) NOT NULL,
  `alert_name` VARCHAR(200) NOT NULL,
  `status` VARCHAR(16) NOT NULL,
  `severity` VARCHAR(32) NOT NULL,
  `service` VARCHAR(200) NOT NULL,
  `labels` LONGTEXT NOT NULL,
  `annotations` LONGTEXT,
  `starts_at` DATETIME(3),
  `ends_at` DATETIME(3),
  `group_key` VARCHAR(255) NOT NULL,
  `receiver` VARCHAR(200) NOT NULL,
  `generator_url` TEXT,
  `received_count` INTEGER NOT NULL,
  `created_at` DATETIME(3) NOT NULL,
  `updated_at` DATETIME(3) NOT NULL,
  UNIQUE KEY `alert_record_fingerprint` (`fingerprint`),
  KEY `alert_record_alert_name` (`alert_name`),
  KEY `alert_record_group_key` (`group_key`),
  KEY `alert_record_updated_at_id` (`updated_at`, `id`),
  KEY `alert_record_status_updated_at_id` (`status`, `updated_at`, `id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `alert_run` (
  `id` INTEGER AUTO_INCREMENT NOT NULL PRIMARY KEY,
  `alert_id` INTEGER NOT NULL,
  `run_id` VARCHAR(64) NOT NULL,
  `session_id` VARCHAR(64) NOT NULL,
  `created_at` DATETIME(3) NOT NULL,
  KEY `alert_run_alert_id` (`alert_id`),
  KEY `alert_run_run_id` (`run_id`),
  UNIQUE KEY `alert_run_alert_id_run_id` (`alert_id`, `run_id`),
  FOREIGN KEY (`alert_id`) REFERENCES `alert_record` (`id`) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- diagnosis_run_text follows diagnosis_run (with binary logging on, creating a trigger needs
-- SUPER or log_bin_trust_function_creators=1). Filling it for runs that existed before it:
--   INSERT IGNORE INTO diagnosis_run_text (run_id, started_at, question, answer)
--   SELECT run_id, started_at, LOWER(question), LOWER(answer) FROM diagnosis_run

CREATE TRIGGER IF NOT EXISTS `diagnosis_run_text_insert` AFTER INSERT ON `diagnosis_run`
FOR EACH ROW
  INSERT INTO `diagnosis_run_text` (`run_id`, `started_at`, `question`, `answer`)
  VALUES (NEW.`run_id`, NEW.`started_at`, LOWER(NEW.`question`), LOWER(NEW.`answer`));

CREATE TRIGGER IF NOT EXISTS `diagnosis_run_text_update` AFTER UPDATE ON `diagnosis_run`
FOR EACH ROW
  UPDATE `diagnosis_run_text` SET `run_id` = NEW.`run_id`, `started_at` = NEW.`started_at`,
    `question` = LOWER(NEW.`question`), `answer` = LOWER(NEW.`answer`)
  WHERE `run_id` = OLD.`run_id`
    AND NOT (NEW.`run_id` <=> OLD.`run_id` AND NEW.`started_at` <=> OLD.`started_at`
      AND NEW.`question` <=> OLD.`question` AND NEW.`answer` <=> OLD.`answer`);

CREATE TRIGGER IF NOT EXISTS `diagnosis_run_text_delete` AFTER DELETE ON `diagnosis_run`
FOR EACH ROW
  DELETE FROM `diagnosis_run_text` WHERE `run_id` = OLD.`run_id`;
