"""Vocabulary for the legal haystack: article subjects with their objects and verbs, and the phrases clauses
are made of. Written for this project. Amounts and dates are in words or use at most four digits."""

from __future__ import annotations

from typing import NamedTuple


class Subject(NamedTuple):
    title: str
    objects: tuple[str, ...]
    verbs: tuple[str, ...]


SUBJECTS: tuple[Subject, ...] = (
    Subject(
        "Payment Terms",
        (
            "the Fees",
            "each invoice",
            "any undisputed amount",
            "the agreed expenses",
            "the interest on late payments",
            "any service credit",
        ),
        ("pay", "invoice", "verify", "dispute", "settle", "account for"),
    ),
    Subject(
        "Delivery",
        (
            "the Goods",
            "each consignment",
            "the delivery note",
            "the packaging",
            "the Delivery Schedule",
            "any replacement Goods",
        ),
        ("deliver", "inspect", "package", "label", "unload", "store"),
    ),
    Subject(
        "Confidentiality",
        (
            "the Confidential Information",
            "any copy of the Confidential Information",
            "the terms of this Agreement",
            "the business affairs of the other Party",
        ),
        ("disclose", "protect", "return", "destroy", "use", "keep secure"),
    ),
    Subject(
        "Term and Termination",
        ("this Agreement", "the Initial Term", "any Renewal Period", "the Services in progress", "the exit plan"),
        ("terminate", "renew", "extend", "suspend", "review", "perform"),
    ),
    Subject(
        "Warranties",
        ("the Services", "the Deliverables", "the Goods", "the documentation", "any replacement part"),
        ("perform", "supply", "repair", "replace", "test", "maintain"),
    ),
    Subject(
        "Limitation of Liability",
        (
            "any claim",
            "the aggregate liability",
            "any indirect loss",
            "the cost of procuring substitute services",
            "the recoverable damages",
        ),
        ("limit", "exclude", "notify", "mitigate", "calculate", "settle"),
    ),
    Subject(
        "Force Majeure",
        (
            "the affected obligations",
            "the Force Majeure Event",
            "the business continuity plan",
            "the remaining Services",
        ),
        ("perform", "suspend", "notify", "resume", "mitigate", "document"),
    ),
    Subject(
        "Intellectual Property",
        (
            "the Background Materials",
            "the Foreground Materials",
            "any licence granted",
            "the source code",
            "the trade marks of the Customer",
        ),
        ("license", "use", "modify", "assign", "protect", "register"),
    ),
    Subject(
        "Acceptance",
        (
            "the Acceptance Tests",
            "each Deliverable",
            "the test results",
            "any defect found during testing",
            "the Acceptance Certificate",
        ),
        ("conduct", "witness", "approve", "reject", "correct", "issue"),
    ),
    Subject(
        "Audit and Records",
        (
            "the accounting records",
            "the supporting documents",
            "the audit report",
            "the premises used to perform the Services",
        ),
        ("keep", "inspect", "copy", "retain", "produce", "examine"),
    ),
    Subject(
        "Insurance",
        ("the required insurance", "the certificate of insurance", "each policy", "the premiums due under each policy"),
        ("maintain", "obtain", "renew", "produce", "pay", "review"),
    ),
    Subject(
        "Data Protection",
        (
            "the Personal Data",
            "the processing records",
            "any data breach",
            "the security measures",
            "any data subject request",
        ),
        ("process", "protect", "report", "delete", "transfer", "review"),
    ),
    Subject(
        "Dispute Resolution",
        (
            "any dispute",
            "the dispute notice",
            "the mediation procedure",
            "the expert determination",
            "the written submissions",
        ),
        ("refer", "escalate", "resolve", "settle", "submit", "record"),
    ),
    Subject(
        "Assignment and Subcontracting",
        ("this Agreement", "the rights under this Agreement", "any subcontract", "the obligations of the Supplier"),
        ("assign", "transfer", "subcontract", "novate", "approve", "review"),
    ),
    Subject(
        "Service Levels",
        (
            "the Service Levels",
            "the monthly performance report",
            "any Service Failure",
            "the service credits",
            "the remediation plan",
        ),
        ("meet", "measure", "report", "review", "remedy", "monitor"),
    ),
    Subject(
        "Personnel",
        (
            "the Key Personnel",
            "the staff engaged on the Services",
            "any replacement staff",
            "the site rules of the Customer",
        ),
        ("appoint", "replace", "train", "supervise", "remove", "vet"),
    ),
)
PARTIES = ("the Supplier", "the Customer")
DEADLINES = (
    "within thirty days",
    "within five Business Days",
    "within ten days of a written request",
    "promptly",
    "without undue delay",
    "before the end of each Contract Year",
    "no later than the date set out in the Order Form",
    "within fourteen days of the Effective Date",
)
CONDITIONS = (
    "unless otherwise agreed in writing",
    "subject to the other provisions of this Article",
    "to the extent permitted by applicable law",
    "save as expressly provided in this Agreement",
    "at its own cost",
    "acting reasonably and in good faith",
)
REMEDIES = (
    "terminate this Agreement by written notice",
    "withhold the affected part of the Fees",
    "recover the reasonable costs it incurs as a result",
    ("suspend its own obligations until the failure is remedied"),
    "appoint a third party to do so at the cost of the defaulting Party",
)
EVENTS = (
    "a material breach",
    "an Insolvency Event",
    "a Force Majeure Event",
    "a Change of Control",
    "a persistent Service Failure",
    "a breach of the confidentiality obligations",
)
LOSSES = (
    "any indirect or consequential loss",
    "any loss of profit or revenue",
    "any loss of goodwill",
    "any delay or failure in performance",
    "the loss or corruption of data",
)
AMOUNTS = (
    "the sum of five thousand pounds",
    "an amount equal to ten per cent of the annual Fees",
    "the Fees paid in the preceding twelve months",
    "one hundred and fifty pounds for each day of delay",
    "the sum of 2500 pounds",
    "a service credit of 750 pounds",
    "twice the annual Fees",
    "the sum of one million pounds",
)
DATES = (
    "the Effective Date",
    "the thirtieth day of June",
    "the end of the Initial Term",
    "the date of acceptance",
    "31 March 2027",
    "the first day of January following the Effective Date",
    "the expiry of the notice period",
    "the final payment date",
)
NOTICE = ("thirty days'", "ten Business Days'", "one calendar month's", "ninety days'", "three months'")
MANNERS = (
    "with reasonable skill and care",
    "in accordance with Good Industry Practice",
    "in a timely and professional manner",
    "in accordance with the Specification",
    "in compliance with all applicable laws",
)
QUALITIES = (
    "free from material defects",
    "fit for the purpose described in the Specification",
    "of satisfactory quality",
    "supplied in accordance with the Specification",
)
PERIODS = (
    "for a period of twelve months from the date of acceptance",
    "throughout the Term",
    "for ninety days after delivery",
    "until the end of the warranty period",
)
SURVIVAL = (
    "the expiry or termination of this Agreement",
    "completion of the Services",
    "payment of the final invoice",
    "the end of the Exit Period",
)
DUE = (
    "thirty days after receipt of a valid invoice",
    "on the last Business Day of each month",
    "on the first day of each Contract Year",
    "fourteen days after the date of acceptance",
)
DEFINITIONS = (
    '"Business Day" means a day other than a Saturday, a Sunday or a public holiday',
    ('"Contract Year" means each period of twelve months beginning on the Effective Date or on an anniversary of it'),
    ('"Deliverables" means all documents, products and materials supplied by the Supplier under this Agreement'),
    (
        '"Good Industry Practice" means the skill, care and foresight expected of a skilled and experienced '
        "supplier of similar services"
    ),
    '"Specification" means the description of the Services and Goods set out in the Order Form',
    '"Personal Data" has the meaning given to it in the applicable data protection legislation',
    '"Key Personnel" means the individuals named as such in the Order Form',
    '"Service Failure" means any failure to meet a Service Level',
)
